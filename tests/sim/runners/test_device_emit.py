"""emit_fold prints what the per-key walk over the devices prints, whichever way it walks: the
devices' values as one table when they printed the same keys in the same order, key by key when
they did not."""

from __future__ import annotations

import dataclasses
import random

from runner_kit import HGX

from glimmer.contract.device_fold import fold_devices
from glimmer.contract.names import canonical_name
from glimmer.sim.runners.devices import Reading, Value, emit_fold, worst_index
from glimmer.sim.runners.emit import Stdout
from glimmer.sim.runners.node import Device, view
from glimmer.sim.twin import FleetSim

KIND = "clockprobe"
KEYS = ("sustainedClockPct", "sm_clock_mhz", "eccErrors", "gpuName", "samplesTaken", "flag")


def _devices(twin: FleetSim) -> tuple[Device, ...]:
    nv = view(twin, HGX, 0.0)
    assert nv is not None and len(nv.devices) > 1
    return nv.devices


def _reading(dev: Device, rng: random.Random, keys: tuple[str, ...]) -> Reading:
    pick: dict[str, Value] = {
        "sustainedClockPct": rng.uniform(80.0, 100.0),
        "sm_clock_mhz": rng.uniform(1500.0, 2000.0),
        "eccErrors": rng.randrange(3),
        "gpuName": rng.choice(["H100", "n/a"]),
        "samplesTaken": rng.choice([rng.randrange(100), "n/a"]),
        "flag": rng.choice([True, False, 1.5]),
    }
    return Reading(dev, {k: pick[k] for k in keys}, {"sm_clock_mhz": rng.choice([0, 1])})


def _walked(readings: list[Reading]) -> list[str]:
    """What the fold printed before it had a table walk: every key in first-print order, the
    devices that printed it, the first such device's decimals."""
    out = Stdout("X")
    keys: dict[str, None] = {}
    for r in readings:
        keys.update(dict.fromkeys(r.values))
    for key in keys:
        present = [r.values[key] for r in readings if key in r.values]
        decimals = next(r.decimals.get(key, 2) for r in readings if key in r.values)
        out.kv(key, fold_devices(canonical_name(KIND, key), present), decimals)
    return out.lines


def _emitted(readings: list[Reading]) -> list[str]:
    out = Stdout("X")
    emit_fold(out, KIND, readings, visible=len(readings), window_s=1.0, concurrency="all",
              primary="sustainedClockPct", spreads={})  # fmt: skip
    return out.lines[: len(out.lines) - 7]  # less the fold's own account


def test_a_board_of_the_same_keys_folds_as_the_walk(healthy: FleetSim) -> None:
    rng = random.Random(7)
    for _ in range(50):
        readings = [_reading(d, rng, KEYS) for d in _devices(healthy)]
        assert _emitted(readings) == _walked(readings)


def test_keys_in_another_order_or_missing_fold_as_the_walk(healthy: FleetSim) -> None:
    rng = random.Random(11)
    for _ in range(50):
        readings = []
        for d in _devices(healthy):
            keys = list(KEYS)
            rng.shuffle(keys)
            kept = len(keys) if rng.random() < 0.5 else rng.randrange(1, len(keys) + 1)
            readings.append(_reading(d, rng, tuple(keys[:kept])))
        assert _emitted(readings) == _walked(readings)


def test_no_devices_prints_only_the_account() -> None:
    out = Stdout("X")
    assert emit_fold(out, KIND, [], visible=0, window_s=1.0, concurrency="all",
                     primary="sustainedClockPct", spreads={}) == 0  # fmt: skip
    assert [line.split("=")[0] for line in out.lines] == [
        "deviceCount", "devicesVisible", "deviceWindowS", "deviceConcurrency",
        "worstDeviceIndex", "worstDevicePciBusId", "deviceHomogeneous",
    ]  # fmt: skip


def _worst_as_before(readings: list[Reading], primary: str, floor: bool) -> int:
    numeric = [(r.values.get(primary), i) for i, r in enumerate(readings)]
    numeric = [(v, i) for v, i in numeric if isinstance(v, int | float)]
    if not numeric:
        return 0
    if floor:
        return min(numeric, key=lambda p: (p[0], p[1]))[1]
    return max(numeric, key=lambda p: (p[0], -p[1]))[1]


def test_the_worst_device_is_the_first_of_the_worst(healthy: FleetSim) -> None:
    rng = random.Random(3)
    devices = _devices(healthy)
    for _ in range(100):
        readings = [
            Reading(d, {"sustainedClockPct": rng.choice([90.0, 95, 99.5, "n/a"]),
                        "powerDrawW": rng.choice([300.0, 310, "n/a"])}, {})
            for d in devices
        ]  # fmt: skip
        got = worst_index(KIND, readings, "sustainedClockPct")  # a floor: the lowest
        assert got == _worst_as_before(readings, "sustainedClockPct", floor=True)
        got = worst_index(KIND, readings, "powerDrawW")  # a ceiling: the highest
        assert got == _worst_as_before(readings, "powerDrawW", floor=False)


def test_a_board_of_two_parts_is_not_homogeneous(healthy: FleetSim) -> None:
    devices = _devices(healthy)
    other = dataclasses.replace(devices[1], name="another GPU")
    for board, expected in ((devices, "true"), ((devices[0], other), "false")):
        out = Stdout("X")
        readings = [Reading(d, {"sustainedClockPct": 99.0}, {}) for d in board]
        spreads = {"spreadPct": "sustainedClockPct"}
        emit_fold(out, KIND, readings, visible=len(board), window_s=1.0, concurrency="all",
                  primary="sustainedClockPct", spreads=spreads)  # fmt: skip
        assert f"deviceHomogeneous={expected}" in out.lines
        assert ("spreadPct=n/a" in out.lines) is (expected == "false")
