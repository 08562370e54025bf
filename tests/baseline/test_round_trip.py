"""The baseline round trip on the simulator: measure a healthy fleet, derive, pin, and judge.

The built-in acceptance profile, stripped of its gates, runs as a baseline on 48 generated HGX
H100 nodes (one GPU product, so one distribution per metric). The derived profile then runs,
with other seeds, on the same healthy fleet (nothing may fail: the noise of a new run must stay
inside the margin) and on the fleet with one planted fault at a time (exactly the planted node
fails, on the expected test and metric).
"""

from __future__ import annotations

from functools import cache

import pytest
from baseline_world import H100, acceptance, hgx_fleet, simulate

from glimmer.api.load import load_text
from glimmer.api.profile import BurnInProfile
from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTest
from glimmer.baseline.collect import collect
from glimmer.baseline.derive import Derivation, derive
from glimmer.baseline.suite import Suite, planned_tests, thresholdless, without_gpu_class_matrices
from glimmer.baseline.write import render
from glimmer.contract.vocab import Phase
from glimmer.fleet.load import load_topology
from glimmer.plan.lint import lint_loaded
from glimmer.sim.faults import Fault
from glimmer.verdict.evaluate import evaluate

BASELINE_SEED = 7
HEALTHY_SEEDS = (8, 9)
FAULT_SEED = 8
METRIC = "hostToDeviceBandwidthGBs"


@cache
def _baseline() -> BurnInRun:
    bare = thresholdless(acceptance())
    return simulate(hgx_fleet(), bare, seed=BASELINE_SEED, name="baseline", baseline=True)


@cache
def _derived() -> tuple[Derivation, str]:
    derivation = derive(acceptance(), collect([_baseline()]))
    return derivation, render(derivation)


@cache
def _pinned() -> Suite:
    loaded = load_text(_derived()[1], "derived.yaml")
    profile = next(i.obj for i in loaded if isinstance(i.obj, BurnInProfile))
    tests = {i.name: i.obj.spec for i in loaded if isinstance(i.obj, BurnInTest)}
    return Suite(profile, tests)


def _not_passed(run: BurnInRun) -> list[TestResult]:
    assert run.status is not None
    return [r for r in run.status.results or [] if r.phase is not Phase.PASSED]


def test_a_gated_profile_cannot_run_as_a_baseline() -> None:
    refused = simulate(hgx_fleet(8), acceptance(), seed=1, name="gated", baseline=True)
    assert refused.status is not None and refused.status.phase is Phase.ERROR
    assert "spec.baseline is true" in (refused.status.results or [])[0].message  # type: ignore[operator]


def test_the_baseline_run_measures_every_node_and_certifies_nothing() -> None:
    run = _baseline()
    assert run.status is not None and run.status.phase is Phase.PASSED
    assert run.status.passed == 48 * 5 and _not_passed(run) == []


def test_the_derived_profile_gates_every_test_and_lints_clean() -> None:
    derivation, text = _derived()
    assert [p.group for p in derivation.profiles] == [H100]
    assert lint_loaded(load_text(text, "derived.yaml")) == []
    gated = {
        t.planned.name: {g.threshold.metric for g in t.gates} for t in derivation.profiles[0].tests
    }
    assert {"xidEvents", "pcieReplayErrors", "nicLinkDownEvents"} <= gated["host-fault-counters"]
    assert {"sustainedClockPct", "sustainedFmaThroughputTflops"} <= gated["sustained-clock"]
    assert {"miscompares", "sdcDetections", "sustainedThroughputTflops"} <= gated["gpu-stress"]
    assert {"hostToDeviceBandwidthGBs", "deviceToHostBandwidthGBs"} <= gated["memory-bandwidth"]
    assert "diagTestsFailed" in gated["dcgm-diagnostics"]
    # The derived floor sits far above the spec-sheet-era gate it replaces, and below the fleet.
    clock = next(t for t in derivation.profiles[0].tests if t.planned.name == "sustained-clock")
    floor = next(g for g in clock.gates if g.threshold.metric == "sustainedClockPct")
    assert 70 < float(floor.threshold.value) <= floor.summary.low


@pytest.mark.parametrize("seed", HEALTHY_SEEDS)
def test_the_derived_profile_passes_the_healthy_fleet_under_new_noise(seed: int) -> None:
    run = simulate(hgx_fleet(), _pinned(), seed=seed, name=f"healthy-{seed}")
    assert [(r.nodes, r.name, r.message) for r in _not_passed(run)] == []
    assert run.status is not None and run.status.phase is Phase.PASSED


FAULTS = [
    # mode, target, the node, the failing tests, a (test, metric) the derived gates must name
    ("gpu_low_pstate", "gpu:hgx-su000-node-0005/3", "hgx-su000-node-0005",
     {"sustained-clock", "gpu-stress"}, ("gpu-stress", "sustainedClockPct")),
    ("gpu_pcie_downtrained", "gpu:hgx-su001-node-0002/1", "hgx-su001-node-0002",
     {"host-fault-counters", "memory-bandwidth", "dcgm-diagnostics"},
     ("memory-bandwidth", "hostToDeviceBandwidthGBs")),
    ("gpu_silent_data_corruption", "gpu:hgx-su000-node-0017/6", "hgx-su000-node-0017",
     {"gpu-stress"}, ("gpu-stress", "miscompares")),
]  # fmt: skip


@pytest.mark.parametrize(("mode", "target", "node", "tests", "detector"), FAULTS)
def test_the_derived_profile_fails_exactly_the_planted_fault(
    mode: str, target: str, node: str, tests: set[str], detector: tuple[str, str]
) -> None:
    name = mode.replace("_", "-")
    run = simulate(hgx_fleet(), _pinned(), seed=FAULT_SEED, name=name, faults=[Fault(mode, target)])
    failed = _not_passed(run)
    assert {(tuple(r.nodes or ()), r.name) for r in failed} == {((node,), t) for t in tests}
    assert all(r.phase is Phase.FAILED for r in failed)
    test, metric = detector
    named = next(r for r in failed if r.name == test)
    if metric not in {v.metric for v in named.violations or []}:
        # The runner failed the part itself (its own verdict comes first); its reading must
        # still break the derived gate.
        gate = next(g for g in _pinned().tests[test].thresholds or [] if g.metric == metric)
        verdict = evaluate(named.metrics or {}, named.unmeasurable or [], [gate.to_contract()])
        assert not verdict.passed, (named.metrics or {}).get(metric)


def test_a_mixed_fleet_is_derived_per_gpu_product() -> None:
    """ai-factory mixes 18 GB200 trays with two HGX H100 and two PCIe H100 servers. Per product,
    GB200 gets its own tight gates and the two-node products get none derived, keeping the
    built-in gates their units pass; pooled, the GB200's host-to-device floor would sink to the
    H100 servers' figure, seven times lower."""
    topo = load_topology("ai-factory")
    run = simulate(topo, thresholdless(acceptance()), seed=3, name="af", baseline=True)
    per_product = derive(acceptance(), collect([run]))
    gates = {p.suffix: sum(len(t.gates) for t in p.tests) for p in per_product.profiles}
    assert gates["-nvidia-gb200"] > 50
    assert (gates["-nvidia-h100-80gb-hbm3"], gates["-nvidia-h100-pcie"]) == (0, 0)
    kept = {p.suffix: sum(len(t.kept) for t in p.tests) for p in per_product.profiles}
    # The per-product copy matrix runs as its parent in a baseline (its cells only choose gates).
    builtin = sum(len(p.gates) for p in planned_tests(without_gpu_class_matrices(acceptance())[0]))
    assert kept["-nvidia-h100-pcie"] == builtin
    assert lint_loaded(load_text(render(per_product), "af.yaml")) == []

    def h2d(d: Derivation, group: str) -> float:
        profile = next(p for p in d.profiles if p.group == group)
        test = next(t for t in profile.tests if t.planned.name == "memory-bandwidth")
        return float(next(g for g in test.gates if g.threshold.metric == METRIC).threshold.value)

    pooled = derive(acceptance(), collect([run], by_product=False))
    assert h2d(per_product, "NVIDIA-GB200") > 7 * h2d(pooled, "")
