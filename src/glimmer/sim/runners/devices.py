"""Multi-device runners: iterate every allocated GPU and fold to the worst (invariant 14).

Each device is measured on its own; the gated figure keeps its name and is the worst device's
(floors Min, ceilings Max, counters Sum, by the registry's Aggregation; lifetime counters are
summed; labels come from the first device). The fold then says how it was made: deviceCount,
devicesVisible, deviceWindowS, deviceConcurrency, worstDeviceIndex, worstDevicePciBusId,
deviceHomogeneous and the kind's spreads (n/a on one device or a heterogeneous board).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from glimmer.contract.device_fold import Fold, fold_by, fold_devices, numeric_fold
from glimmer.contract.names import canonical_name
from glimmer.contract.registry import Aggregation, aggregation_of
from glimmer.sim.runners.emit import Stdout
from glimmer.sim.runners.node import Device

Value = float | int | str


@dataclass(frozen=True)
class Reading:
    """One device's figures, keyed by the raw keys the runner prints, in print order."""

    device: Device
    values: dict[str, Value]
    decimals: dict[str, int]


@lru_cache(maxsize=4096)
def _canonical(kind: str, key: str) -> str:
    # A runner prints the same few dozen keys on every call: each named once, not per call.
    return canonical_name(kind, key)


def _fold(kind: str, key: str, values: list[Value]) -> Value:
    return fold_devices(_canonical(kind, key), values)


@lru_cache(maxsize=256)
def _rules(kind: str, keys: tuple[str, ...]) -> tuple[Fold | None, ...]:
    # A runner prints the same keys in the same order on every call: their folds are decided
    # once per (kind, keys), not per key per call.
    return tuple(numeric_fold(_canonical(kind, key)) for key in keys)


def worst_index(kind: str, readings: Sequence[Reading], primary: str) -> int:
    """Position of the device behind the gated figure ``primary`` (ties: the first)."""
    values = [r.values.get(primary) for r in readings]
    # Compared as (value, position) pairs themselves, not through a key function: the same
    # order (ties: the first), without a call per device.
    if aggregation_of(_canonical(kind, primary)) is Aggregation.MIN:
        lowest = [(v, i) for i, v in enumerate(values) if isinstance(v, int | float)]
        return min(lowest)[1] if lowest else 0
    highest = [(v, -i) for i, v in enumerate(values) if isinstance(v, int | float)]
    return -max(highest)[1] if highest else 0


def _emit_columns(
    out: Stdout, kind: str, readings: Sequence[Reading], order: tuple[str, ...]
) -> None:
    """The usual board: every device printed the same keys in the same order, so the values
    are a table whose columns are the keys, and a key's decimals are the first device's (as
    :func:`_emit_keys` finds)."""
    first = readings[0].decimals
    columns = zip(*(r.values.values() for r in readings), strict=True)
    for key, rule, column in zip(order, _rules(kind, order), columns, strict=True):
        out.kv(key, fold_by(rule, column), first.get(key, 2))


def _emit_keys(out: Stdout, kind: str, readings: Sequence[Reading]) -> None:
    """Devices that printed different keys: each key folds the devices that printed it."""
    keys: dict[str, None] = {}  # every device's keys, in first-print order
    for r in readings:
        keys.update(dict.fromkeys(r.values))
    for key in keys:
        present = [r.values[key] for r in readings if key in r.values]
        decimals = next(r.decimals.get(key, 2) for r in readings if key in r.values)
        out.kv(key, _fold(kind, key, present), decimals)


def _homogeneous(readings: Sequence[Reading]) -> bool:
    """Every device is of one name and part (none: not homogeneous)."""
    if not readings:
        return False
    # The pairs compared with the first device's, as a set of them would find: the same part
    # object answers by identity, without hashing a part's every figure per device.
    first = (readings[0].device.name, readings[0].device.part)
    return all((r.device.name, r.device.part) == first for r in readings)


def spread(values: Sequence[float]) -> float:
    best = max(values)
    return 0.0 if best <= 0 else (best - min(values)) / best * 100.0


def emit_fold(
    out: Stdout,
    kind: str,
    readings: Sequence[Reading],
    *,
    visible: int,
    window_s: float,
    concurrency: str,
    primary: str,
    spreads: dict[str, str],
) -> int:
    """Print the folded figures and the fold's own account; returns the worst position."""
    order = tuple(readings[0].values) if readings else ()
    if readings and all(tuple(r.values) == order for r in readings):
        _emit_columns(out, kind, readings, order)
    else:
        _emit_keys(out, kind, readings)
    worst = worst_index(kind, readings, primary)
    homogeneous = _homogeneous(readings)
    out.kv("deviceCount", len(readings))
    out.kv("devicesVisible", visible)
    out.kv("deviceWindowS", window_s, 1)
    out.kv("deviceConcurrency", concurrency)
    out.kv("worstDeviceIndex", readings[worst].device.slot if readings else 0)
    out.kv("worstDevicePciBusId", readings[worst].device.pci_bus_id if readings else "")
    out.kv("deviceHomogeneous", homogeneous)
    for name, source in spreads.items():
        numbers = [r.values[source] for r in readings if source in r.values]
        figures = [float(v) for v in numbers if isinstance(v, int | float)]
        if len(figures) < 2 or not homogeneous:
            out.na(name)
        else:
            out.kv(name, spread(figures))
    return worst
