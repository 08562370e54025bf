"""The simulator backend: deterministic discrete events, realistic timing, machinery faults,
and a fleet's nodes and runners behind the same engine."""

from __future__ import annotations

from typing import Any

import pytest
from engine_world import GATE_MISCOMPARES, ScriptedRunner, reply, run_object, spec_of, world

from glimmer.backends.sim.backend import BURST_SECONDS, JITTER, REACTION_WINDOW
from glimmer.backends.sim.driver import drive
from glimmer.backends.sim.faults import INSUFFICIENT_GPU, ExecutionFault
from glimmer.backends.sim.fleet import PRODUCT_LABEL, fleet_backend
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import ExecPhase, LogUnavailable
from glimmer.engine.reconciler import Engine
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

GATED = spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])


def _all(w: Any) -> list[Any]:
    return list(w.backend.executions("default", "run", w.run().metadata.uid))


def _result_dump(w: Any) -> list[Any]:
    return [r.model_dump(mode="json") for r in w.run().status.results]


def test_same_seed_same_run_different_seed_different_timing() -> None:
    def once(seed: int) -> list[Any]:
        w = world(
            4,
            {"a": GATED},
            [{"testRef": "a"}],
            seed=seed,
            runner=ScriptedRunner(default="miscompares=0"),
        )
        w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2))
        w.drive()
        return _result_dump(w)

    assert once(3) == once(3)
    assert once(3) != once(4)


def test_executions_run_their_duration_with_a_little_jitter_and_bursts_are_short() -> None:
    tests = {
        "long": spec_of("gpu-burn", durationSeconds=1200),
        "burst": spec_of("compute-smoke", durationSeconds=600),
    }
    w = world(
        3,
        tests,
        [{"testRef": "long"}, {"testRef": "burst"}],
        runner=ScriptedRunner(default="miscompares=0"),
    )
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=3))
    w.drive()
    for e in _all(w):
        ran = (e.finished_at - e.started_at).total_seconds()
        if e.spec.test == "long":
            assert 1200 <= ran <= 1200 * (1 + JITTER)
        else:
            assert BURST_SECONDS[0] <= ran <= BURST_SECONDS[1]
        assert e.created_at < e.started_at


def test_never_scheduled_execution_waits_with_the_schedulers_message() -> None:
    w = world(1, {"a": GATED}, [{"testRef": "a"}], faults=[ExecutionFault("unschedulable")])
    w.submit(run_object(targets=["node-000"]))
    for _ in range(3):
        w.pass_()
    w.backend.advance_to(600)
    [e] = _all(w)
    assert e.phase is ExecPhase.PENDING and e.scheduler_message == INSUFFICIENT_GPU


def test_image_pull_back_off_is_a_waiting_reason() -> None:
    w = world(1, {"a": GATED}, [{"testRef": "a"}], faults=[ExecutionFault("image-pull")])
    w.submit(run_object(targets=["node-000"], retryOnErrorLimit=0))
    w.drive()
    result = w.run().status.results[0]
    assert result.phase is Phase.ERROR
    assert "(kubelet: ImagePullBackOff: Back-off pulling image" in result.message


def test_evicted_execution_is_an_error_with_the_kubelets_account() -> None:
    w = world(
        1,
        {"a": GATED},
        [{"testRef": "a"}],
        faults=[ExecutionFault("evicted", after=30)],
        runner=ScriptedRunner(default="miscompares=0"),
    )
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    result = w.run().status.results[0]
    assert result.phase is Phase.ERROR and 'reason "Evicted"' in result.message
    assert result.attempts[0].exit_code == 137


def test_hung_execution_is_killed_at_its_deadline() -> None:
    w = world(1, {"a": GATED}, [{"testRef": "a"}], faults=[ExecutionFault("hang")])
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    result = w.run().status.results[0]
    assert result.phase is Phase.ERROR
    assert result.message == "test exceeded its deadline and was killed — no verdict"


def test_deleted_execution_is_recorded_not_silently_rerun() -> None:
    w = world(1, {"a": GATED}, [{"testRef": "a"}], faults=[ExecutionFault("deleted", after=30)])
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    result = w.run().status.results[0]
    assert result.phase is Phase.ERROR and "disappeared before it reported" in result.message


def test_unreadable_log_cannot_be_read_and_gates_cannot_be_judged() -> None:
    w = world(
        1,
        {"a": GATED},
        [{"testRef": "a"}],
        faults=[ExecutionFault("log-unreadable")],
        runner=ScriptedRunner(default="miscompares=0"),
    )
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    [e] = _all(w)
    with pytest.raises(LogUnavailable):
        w.backend.read_log("default", e.name)
    assert w.run().status.results[0].message.startswith("runner logs unavailable")


def test_runner_output_is_what_the_engine_harvests() -> None:
    runner = ScriptedRunner(default="miscompares=0").on(
        reply("miscompares=2\nbad"), node="node-001"
    )
    w = world(2, {"a": GATED}, [{"testRef": "a"}], runner=runner)
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    w.drive()
    phases = {r.nodes[0]: r.phase for r in w.run().status.results}
    assert phases == {"node-000": Phase.PASSED, "node-001": Phase.FAILED}


def test_fleet_backend_nodes_are_the_fleets_and_a_planted_fault_is_found() -> None:
    topo = load_topology("ai-factory")
    host = topo.nodes[0].hostname
    twin = FleetSim(topo, [Fault("gpu_low_pstate", f"node:{host}", 1.0)])
    backend = fleet_backend(twin, seed=5)
    assert len(backend.nodes) == len(topo.nodes)
    assert backend.nodes[host].labels[PRODUCT_LABEL]
    targets = [n.hostname for n in topo.nodes[:4]]
    backend.submit(run_object(targets=targets, profile_ref="acceptance", maxConcurrentNodes=4))
    result = drive(backend, Engine(backend), "default", "run")
    status = result.run.status
    assert status.phase is Phase.FAILED
    failed = {(r.name, r.nodes[0]) for r in status.results if r.phase is Phase.FAILED}
    assert failed and all(node == host for _, node in failed)
    assert all(not n.unschedulable for n in backend.nodes.values())


def test_finishes_within_the_reaction_window_are_seen_in_one_pass_and_keep_their_own_times() -> (
    None
):
    def once(window: float) -> tuple[int, list[Any]]:
        w = world(4, {"a": GATED}, [{"testRef": "a"}], runner=ScriptedRunner(default="x=1"))
        w.backend.reaction_window = window
        w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=4))
        return w.drive().passes, _result_dump(w)

    exact, gathered = once(0.0), once(REACTION_WINDOW)
    # Four finishes seconds apart: seen one by one, or gathered into fewer passes.
    assert exact[0] > gathered[0]
    # When the engine looks changes nothing it records: every time is the execution's own.
    assert gathered[1] == exact[1]
    assert len({r["finishedAt"] for r in exact[1]}) == 4
