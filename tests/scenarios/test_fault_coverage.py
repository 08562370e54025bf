"""Fault coverage of the built-in profiles (issue 4, item 5), through the engine.

Each fault mode is injected alone; every built-in profile runs as a BurnInRun through the
engine on the simulator backend (tools.coverage.engine) over the nodes the fault
reaches and nodes it does not, and the finished runs' results are judged by
tools.coverage.sweep. Every mode must be seen by its expected detectors — or be marked
out of scope by the mode table, or outside the built-in profiles with a runner that still sees
it when run directly — and nothing may fail where the fault does not reach. A healthy 512-node
fleet with measurement noise passes every built-in profile run through the engine.

The runner-level sweep (the same judging over harness.run_unit, no engine) must agree with the
engine on which detectors fire.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import Phase
from glimmer.plan.builtin import builtin_tests
from glimmer.sim.faults import Fault
from glimmer.sim.modes import MODES
from glimmer.sim.twin import FleetSim
from tools.coverage.detectors import ADDED, OUTSIDE_BUILTINS, REMOVED
from tools.coverage.doc import REGENERATE, render
from tools.coverage.engine import ENGINE, Planned, builtin_profile, drive_runs
from tools.coverage.harness import builtins
from tools.coverage.sweep import (
    AI_FACTORY,
    RUNNERS,
    SCENARIO_BY_MODE,
    HealthySweep,
    ModeResult,
    cover,
    healthy_sweep,
    problems,
    topology,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "fault-coverage.md"


@cache
def _covered(mode: str) -> ModeResult:
    return cover(mode, ENGINE)


@cache
def _healthy() -> HealthySweep:
    return healthy_sweep(method=ENGINE)


def test_every_mode_has_a_scenario_and_known_corrections() -> None:
    names = {m.name for m in MODES}
    assert set(SCENARIO_BY_MODE) == names
    assert {e.mode for e in (*ADDED, *REMOVED)} <= names
    assert set(OUTSIDE_BUILTINS) <= names


@pytest.mark.parametrize("mode", [m.name for m in MODES])
def test_each_mode_alone_is_detected_or_declared_out_of_scope(mode: str) -> None:
    result = _covered(mode)
    assert problems(result) == []
    if not result.out_of_scope and mode not in OUTSIDE_BUILTINS:
        assert result.detected_by, f"{mode}: no built-in detector fired"
    # Every built-in profile ran on the reached nodes, whatever failed first.
    if result.scenario.affected:
        assert {u.test for u in result.affected} >= _first_tests()


@pytest.mark.parametrize("mode", [m.name for m in MODES])
def test_the_runner_level_sweep_sees_what_the_engine_sees(mode: str) -> None:
    engine = {(d.detector, d.status) for d in _covered(mode).detectors}
    runners = {(d.detector, d.status) for d in cover(mode, RUNNERS).detectors}
    assert runners == engine


def _first_tests() -> set[str]:
    """Each built-in profile's first test: it runs on every target even in a failFast run."""
    return {tests[0] for tests in builtins().profiles.values()}


def test_the_demo_faults_are_found_by_the_expected_tests() -> None:
    """The two faults `glimmer run` plants: a low P-state and a degraded NIC."""
    pinned = {(d.detector.kind, d.detector.metric) for d in _covered("gpu_low_pstate").detected_by}
    assert ("clockprobe", "sustainedClockPct") in pinned
    nic = {(d.detector.kind, d.detector.metric) for d in _covered("nic_degraded").detected_by}
    assert ("ib-write-bw", "bandwidthGbps") in nic


def test_a_healthy_512_node_fleet_passes_every_built_in_profile() -> None:
    """Through the engine; also checks docs/fault-coverage.md, which needs the same sweep (one
    test, so that the two workers do not both spend the sweep)."""
    sweep = _healthy()
    assert sweep.nodes == 512
    assert [(f.test, f.nodes, f.outcome.message) for f in sweep.failures] == []
    for test, spec in builtins().tests.items():
        if any(test in tests for tests in builtins().profiles.values()):
            assert sweep.by_test.get(test, 0) >= (256 if spec.scope.value == "Pair" else 512)
    text = render([_covered(m.name) for m in MODES], sweep, ENGINE)
    current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    assert current == text, f"docs/fault-coverage.md is stale; regenerate it with: {REGENERATE}"


def _engine_run(profile: str, targets: list[str], twin_faults: list[Fault]) -> BurnInRun:
    twin = FleetSim(topology(AI_FACTORY), twin_faults)
    planned = Planned("coverage", profile, tuple(targets), 64)
    runs = drive_runs(twin, [planned], {profile: builtin_profile(profile)}, builtin_tests())
    return runs[planned.name]


def test_the_engine_on_the_simulator_finds_the_demo_faults() -> None:
    """Engine level: acceptance over all of ai-factory and pair-network over one link, with
    the demo's two planted faults; only the planted node and link fail, by the expected
    test and metric (at Node scope the degraded port shows as link retrains)."""
    planted = [
        Fault("gpu_low_pstate", "gpu:hgx-node-0001/3"),
        Fault("nic_degraded", "nic:nvl-node-0004/eth1"),
    ]
    hosts = [n.hostname for n in topology(AI_FACTORY).nodes]
    acceptance = _engine_run("acceptance", hosts, planted)
    assert acceptance.status is not None and acceptance.status.phase is Phase.FAILED
    results = acceptance.status.results or []
    failed = [r for r in results if r.phase in (Phase.FAILED, Phase.ERROR)]
    # The per-product copy cells of other classes skip, and nothing else does.
    skipped = {r.name for r in results if r.phase is Phase.SKIPPED}
    assert skipped and all(name.startswith("memory-bandwidth-") for name in skipped)
    assert sorted((r.nodes, r.name) for r in failed) == [
        (["hgx-node-0001"], "sustained-clock"),
        (["nvl-node-0004"], "host-fault-counters"),
    ]
    by_test = {r.name: r for r in failed}
    assert "sustained" in (by_test["sustained-clock"].message or "")
    # host-health gates its own fault counters: a runner-declared Fail, named in its message.
    nic = by_test["host-fault-counters"]
    assert "nic_link_down=1" in (nic.message or "")
    assert (nic.metrics or {}).get("nicLinkDownEvents") == "1"

    link = _engine_run("pair-network", ["nvl-node-0005", "nvl-node-0004"], planted)
    assert link.status is not None and link.status.phase is Phase.FAILED
    metrics = {
        v.metric
        for r in link.status.results or []
        if r.phase is Phase.FAILED
        for v in r.violations or []
    }
    assert {"bandwidthGbps", "busBandwidthGBs"} <= metrics
