"""The per-product figure table: complete, sourced, and faithful to the measured GB10 curves."""

from __future__ import annotations

import pytest

from glimmer.fleet.skus import all_skus
from glimmer.sim.device_facts import facts
from glimmer.sim.runners.figures import PARTS, gb10_clock_pct, gb10_clockprobe_pct


def test_every_product_has_runner_figures_with_a_source() -> None:
    assert set(PARTS) == {s.key for s in all_skus()}
    for key, part in PARTS.items():
        assert part.source, key
        known = facts(key).boost_clock_mhz
        if known is not None:  # the runners' rated clock is the telemetry's rated clock
            assert part.rated_boost_mhz == known


@pytest.mark.parametrize(
    ("window", "soak", "probe"),
    [(25.0, 82.21, 83.22), (240.0, 70.66, None), (600.0, 69.90, 69.90)],
)
def test_gb10_curves_pass_through_the_measured_points(
    window: float, soak: float, probe: float | None
) -> None:
    assert gb10_clock_pct(window) == pytest.approx(soak)
    if probe is not None:
        assert gb10_clockprobe_pct(window) == pytest.approx(probe)


def test_hopper_copies_clear_the_memory_bandwidth_gate_and_gen4_does_not() -> None:
    """The built-in memory-bandwidth gate (48 GB/s) is a PCIe Gen5 x16 figure: an L40S on
    Gen4 x16 (~24 GB/s) cannot meet it, however healthy."""
    assert PARTS["h100_sxm_80gb"].h2d_gbs > 48 * 1.1
    assert PARTS["l40s_48gb"].h2d_gbs < 48
