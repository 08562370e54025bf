"""Fault coverage of the built-in profiles (issue 4, item 5), at the runner level.

Each fault mode is injected alone; the built-in profiles' tests run on the nodes it reaches and
on nodes it does not, through the simulated runners, contract.parse and the verdict rules
(glimmer.sim.runners.coverage). Every mode must be seen by its expected detectors — or be
marked out of scope by the mode table, or outside the built-in profiles with a runner that
still sees it when run directly — and nothing may fail where the fault does not reach. A
healthy 512-node fleet with measurement noise passes every built-in gate.

Switching to the engine: pass ``runner=`` (a function settling one test on one unit through
the engine on the simulator backend) to ``cover`` and ``healthy_sweep``; the assertions stay.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.backends.sim_driver import run_to_completion
from glimmer.backends.sim_fleet import fleet_backend
from glimmer.contract.vocab import Phase
from glimmer.engine.reconciler import Engine
from glimmer.plan.builtin import builtin_profile
from glimmer.sim.faults import Fault
from glimmer.sim.modes import MODES
from glimmer.sim.runners.coverage import (
    AI_FACTORY,
    SCENARIO_BY_MODE,
    HealthySweep,
    ModeResult,
    cover,
    healthy_sweep,
    problems,
    topology,
)
from glimmer.sim.runners.coverage_doc import REGENERATE, render
from glimmer.sim.runners.detectors import ADDED, OUTSIDE_BUILTINS, REMOVED
from glimmer.sim.runners.harness import builtins
from glimmer.sim.twin import FleetSim

DOC = Path(__file__).resolve().parents[2] / "docs" / "fault-coverage.md"


@cache
def _covered(mode: str) -> ModeResult:
    return cover(mode)


@cache
def _healthy() -> HealthySweep:
    return healthy_sweep()


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


def test_the_demo_faults_are_found_by_the_expected_tests() -> None:
    """The two faults `glimmer run` plants: a low P-state and a degraded NIC."""
    pinned = {(d.detector.kind, d.detector.metric) for d in _covered("gpu_low_pstate").detected_by}
    assert ("clockprobe", "sustainedClockPct") in pinned
    nic = {(d.detector.kind, d.detector.metric) for d in _covered("nic_degraded").detected_by}
    assert ("ib-write-bw", "bandwidthGbps") in nic


def test_a_healthy_512_node_fleet_passes_every_built_in_gate() -> None:
    sweep = _healthy()
    assert sweep.nodes == 512
    assert [(f.test, f.nodes, f.outcome.message) for f in sweep.failures] == []


def test_the_coverage_document_is_current() -> None:
    text = render([_covered(m.name) for m in MODES], _healthy())
    current = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    assert current == text, f"docs/fault-coverage.md is stale; regenerate it with: {REGENERATE}"


def _engine_run(profile: str, targets: list[str], twin_faults: list[Fault]) -> BurnInRun:
    topo = topology(AI_FACTORY)
    twin = FleetSim(topo, twin_faults)
    backend = fleet_backend(
        twin, seed=3, tests=builtins().tests, profiles={profile: builtin_profile_or_fail(profile)}
    )
    run = BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "coverage", "namespace": "default"},
            "spec": {
                "profileRef": profile,
                "maxConcurrentNodes": 64,
                "target": {"nodeNames": targets},
            },
        }
    )
    return run_to_completion(backend, Engine(backend), run)


def builtin_profile_or_fail(name: str) -> BurnInProfile:
    found = builtin_profile(name)
    assert found is not None, name
    return found


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
    failed = [r for r in acceptance.status.results or [] if r.phase is not Phase.PASSED]
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
