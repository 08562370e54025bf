"""Harvesting on every pass (§2.7a): an execution that ended is recorded by the next pass
whatever the wave is doing — suspended, or with every slot taken — and its finishedAt is when
it ended, not when a pass came round to it."""

from __future__ import annotations

from typing import Any

from engine_world import GATE_MISCOMPARES, ScriptedRunner, run_object, spec_of, world

from glimmer.backends.sim.faults import ExecutionFault
from glimmer.contract.vocab import Phase


def _edit_spec(w: Any, **spec: Any) -> None:
    run = w.run()
    w.submit(run.model_copy(update={"spec": run.spec.model_copy(update=spec)}))


def _started(w: Any) -> None:
    """Reconcile until every target has an execution (markRunning, then the first wave)."""
    for _ in range(5):
        w.pass_()
        if len(list(w.backend.executions("default", "run", w.run().metadata.uid))) == 2:
            return
    raise AssertionError("the first wave never started")


def test_an_execution_that_ended_unseen_while_suspended_is_harvested_at_its_own_end_time() -> None:
    tests = {"burn": spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])}
    faults = [ExecutionFault("evicted", node="node-001", attempt=1, after=0.1)]
    w = world(
        2, tests, [{"testRef": "burn"}], runner=ScriptedRunner("miscompares=0"), faults=faults
    )
    w.submit(
        run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2, retryOnErrorLimit=1)
    )
    _started(w)
    _edit_spec(w, suspend=True)
    w.backend.advance_to(w.backend.t + 240)  # evicted a second in; nobody looked for 4 minutes
    w.pass_()
    evicted = next(
        e for e in w.backend.executions("default", "run", w.run().metadata.uid) if not e.live
    )
    result = next(r for r in w.run().status.results if r.nodes == ["node-001"])
    assert result.attempts[0].phase is Phase.ERROR
    assert result.attempts[0].finished_at == evicted.finished_at
    assert result.finished_at == evicted.finished_at
    assert evicted.finished_at is not None and evicted.finished_at < w.backend.now()


def test_an_execution_that_ended_unseen_with_every_slot_taken_is_harvested_on_the_next_pass() -> (
    None
):
    tests = {"burn": spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])}
    faults = [ExecutionFault("evicted", node="node-001", attempt=1, after=0.1)]
    w = world(
        2, tests, [{"testRef": "burn"}], runner=ScriptedRunner("miscompares=0"), faults=faults
    )
    w.submit(
        run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2, retryOnErrorLimit=1)
    )
    _started(w)
    _edit_spec(w, max_concurrent_nodes=1)  # lowered mid-run: node-000 alone fills the cap
    w.backend.advance_to(w.backend.t + 240)
    w.pass_()
    assert [r.nodes for r in w.run().status.results] == [["node-000"], ["node-001"]]


def test_a_harvested_result_ends_when_its_execution_ended() -> None:
    tests = {"burn": spec_of("gpu-burn", durationSeconds=300, thresholds=[GATE_MISCOMPARES])}
    w = world(1, tests, [{"testRef": "burn"}], runner=ScriptedRunner("miscompares=0"))
    w.submit(run_object(targets=["node-000"]))
    w.pass_()
    w.pass_()
    w.backend.advance_to(w.backend.t + 2_000)  # the engine comes back long after the end
    w.pass_()
    (execution,) = w.backend.executions("default", "run", w.run().metadata.uid)
    (result,) = w.run().status.results
    assert result.phase is Phase.PASSED
    assert result.finished_at == result.attempts[-1].finished_at == execution.finished_at
    assert execution.finished_at is not None and execution.finished_at < w.backend.now()
