"""Cordons a crashed pass never recorded (§2.10): a pass cordons a node, then writes the status
that lists it. An engine that resumes after a crash in between finds the node by this run's
stamp: it adopts it where the run has work there, and releases it at once where it has none."""

from __future__ import annotations

from typing import Any

from engine_world import GATE_MISCOMPARES, Interlock, ScriptedRunner, run_object, spec_of, world

from glimmer.engine.keys import CORDON_OWNER
from glimmer.engine.reconciler import Engine


class Crash(Exception):
    """The engine process died here."""


class CrashAfterCreate(Interlock):
    """Dies once, just after creating the first execution on ``node`` (the cordon is written,
    the status that records it is not)."""

    def __init__(self, *args: Any, node: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.node = node
        self.armed = True

    def create_execution(self, spec: Any) -> None:
        super().create_execution(spec)
        if self.armed and spec.node == self.node:
            self.armed = False
            raise Crash(spec.name)


def _crashed_world(**run_spec: Any) -> Any:
    tests = {"burn": spec_of("gpu-burn", durationSeconds=300, thresholds=[GATE_MISCOMPARES])}
    w = world(
        3,
        tests,
        [{"testRef": "burn"}],
        runner=ScriptedRunner("miscompares=0"),
        backend_cls=CrashAfterCreate,
    )
    w.backend.node = "node-000"
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=3, **run_spec))
    w.pass_()  # markRunning
    try:
        w.pass_()
    except Crash:
        pass
    else:
        raise AssertionError("the pass did not crash")
    node = w.backend.get_node("node-000")
    assert node.annotations.get(CORDON_OWNER) and "node-000" not in (
        w.run().status.cordoned_nodes or ()
    )
    w.engine = Engine(w.backend)  # a new process: only the stored run survives
    return w


def test_a_resumed_engine_adopts_a_stamped_node_it_has_work_on() -> None:
    w = _crashed_world()
    w.pass_()
    assert "node-000" in (w.run().status.cordoned_nodes or ())
    w.drive(progress=lambda run, backend: backend.after_pass())
    assert w.backend.outside == []


def test_a_resumed_engine_releases_a_stamped_node_it_has_no_work_on_at_once() -> None:
    w = _crashed_world()
    # The execution the crashed pass created is gone (deleted by someone) and the run may not
    # start anything new: nothing holds node-000 any more.
    uid = w.run().metadata.uid
    for execution in list(w.backend.executions("default", "run", uid)):
        if execution.node == "node-000":
            w.backend.delete_execution("default", execution.name)
    run = w.run()
    w.submit(run.model_copy(update={"spec": run.spec.model_copy(update={"suspend": True})}))
    w.pass_()
    node = w.backend.get_node("node-000")
    assert not node.unschedulable and not node.annotations
    assert "node-000" not in (w.run().status.cordoned_nodes or ())
