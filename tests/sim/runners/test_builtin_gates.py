"""A healthy fleet clears every built-in gate with margin, and its figures are the ones real
parts reach (specs/peers.md §4.2)."""

from __future__ import annotations

import pytest
from runner_kit import HGX, HGX2, NVL, NVL2, PCIE, PCIE2

from glimmer.sim.twin import FleetSim
from tools.coverage.harness import builtins, run_unit
from tools.coverage.sweep import settled_as_due

PAIRS = {HGX: HGX2, NVL: NVL2, PCIE: PCIE2}


def _unit(name: str, node: str) -> tuple[str, ...]:
    spec = builtins().tests[name]
    return (PAIRS[node], node) if spec.scope.value == "Pair" else (node,)


@pytest.mark.parametrize("node", [HGX, NVL, PCIE])
@pytest.mark.parametrize("name", sorted(builtins().tests))
def test_every_built_in_test_passes_on_a_healthy_node(
    healthy: FleetSim, name: str, node: str
) -> None:
    result = run_unit(healthy, name, builtins().tests[name], _unit(name, node))
    # Passed, or a per-product cell that declines a node another cell judges.
    assert settled_as_due(result, healthy.topo), result.outcome.message


def test_every_profile_names_only_known_tests() -> None:
    b = builtins()
    assert set(b.profiles) == {"smoke", "acceptance", "pair-network", "soak", "host"}
    for tests in b.profiles.values():
        assert set(tests) <= set(b.tests)


def _figure(twin: FleetSim, name: str, node: str, metric: str) -> float:
    result = run_unit(twin, name, builtins().tests[name], _unit(name, node))
    return float(result.parsed.metrics[metric])


@pytest.mark.parametrize(
    ("name", "node", "metric", "lo", "hi"),
    [
        # NDR 400G ib_write_bw: 399.6-399.9 Gb/s per HCA.
        ("rdma-write-bandwidth", HGX, "bandwidthGbps", 398.0, 400.0),
        ("gpudirect-rdma-bandwidth", NVL, "bandwidthGbps", 397.0, 400.0),
        # NCCL over one NDR NIC: 46-48 GB/s.
        ("nccl-allreduce-pair", HGX, "busBandwidthGBs", 44.5, 48.5),
        # PCIe Gen5 x16: ~55 GB/s H2D; GB200 copies over NVLink-C2C, several times that.
        ("memory-bandwidth", HGX, "hostToDeviceBandwidthGBs", 52.0, 57.0),
        ("memory-bandwidth", PCIE, "deviceToHostBandwidthGBs", 52.0, 57.0),
        ("memory-bandwidth", NVL, "hostToDeviceBandwidthGBs", 300.0, 450.0),
        # A clock-bound load holds an H100 SXM near its 1,980 MHz boost.
        ("sustained-clock", HGX, "sustainedClockPct", 90.0, 100.0),
        ("sustained-clock", HGX, "ratedBoostClockMHz", 1980.0, 1980.0),
    ],
)
def test_healthy_figures_are_realistic(
    healthy: FleetSim, name: str, node: str, metric: str, lo: float, hi: float
) -> None:
    assert lo <= _figure(healthy, name, node, metric) <= hi
