"""Measurement noise is seeded: the same call measures the same, another attempt or seed
measures afresh, and noise never moves a figure far."""

from __future__ import annotations

from runner_kit import HGX, make_call, run, spec_of

from glimmer.sim.runners import simulate_runner
from glimmer.sim.twin import FleetSim


def test_the_same_call_prints_the_same_bytes(healthy: FleetSim) -> None:
    for kind in ("clockprobe", "gpu-burn", "memory-bw", "host-health", "dcgm-diag"):
        call = make_call(spec_of(kind), HGX)
        assert simulate_runner(healthy, call) == simulate_runner(healthy, call)


def test_a_fresh_twin_of_the_same_fleet_agrees(healthy: FleetSim) -> None:
    again = FleetSim(healthy.topo)
    call = make_call(spec_of("clockprobe"), HGX)
    assert simulate_runner(healthy, call) == simulate_runner(again, call)


def test_another_attempt_or_seed_measures_afresh(healthy: FleetSim) -> None:
    spec = spec_of("clockprobe")
    base = run(healthy, spec, HGX)[1].metrics["sustainedClockPct"]
    retry = run(healthy, spec, HGX, attempt=2)[1].metrics["sustainedClockPct"]
    other = run(healthy, spec, HGX, seed=8)[1].metrics["sustainedClockPct"]
    assert base != retry and base != other
    assert abs(float(base) - float(retry)) < 2.0


def test_noise_stays_small_across_many_seeds(healthy: FleetSim) -> None:
    spec = spec_of("memory-bw")
    values = [float(run(healthy, spec, HGX, seed=s)[1].metrics["hostToDeviceBandwidthGBs"])
              for s in range(40)]  # fmt: skip
    assert min(values) > 52.0 and max(values) < 56.0
    assert len(set(values)) > 30
