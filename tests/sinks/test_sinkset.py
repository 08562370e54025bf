"""The SinkSet: which sinks a transition reaches, the backlog rule, and never raising."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sink_doubles import FakeClock, Gate

from glimmer.api.run import BurnInRun
from glimmer.sinks.envelope import CHECKPOINT, RUN_PHASE_CHANGED, TEST_COMPLETED, Transition
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.outbox import Outbox
from glimmer.sinks.sender import OPERATOR_POLICY, Sender
from glimmer.sinks.sinkset import SinkSet

AT = datetime(2026, 9, 1, tzinfo=UTC)


def a_run(uid: str = "u-1", **status: Any) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "r", "namespace": "lab", "uid": uid},
            "spec": {"profileRef": "p", "target": {"nodeNames": ["n"]}},
            "status": {"phase": "Running", **status},
        }
    )


def t(reason: str, key: str, sinks: tuple[str, ...] = (), **kw: Any) -> Transition:
    return Transition(reason, key, kw.pop("run", a_run()), sinks=sinks, at=AT, **kw)


def make(*always: Any, **named: Any) -> SinkSet:
    return SinkSet(
        named={("lab", k): v for k, v in named.items()},
        always=list(always),
        sender=Sender(OPERATOR_POLICY, FakeClock()),
    )


class Refuses:
    ident = "refuses"

    def __init__(self) -> None:
        self.tries = 0

    def send(self, envelope: Any, body: bytes, timeout: float) -> None:
        self.tries += 1
        raise DeliveryError("HTTP 400: no", permanent=True)


def test_a_plan_without_sinks_delivers_nothing() -> None:
    assert make().deliver(t(RUN_PHASE_CHANGED, "Running"))


def test_named_sinks_are_looked_up_in_the_runs_namespace_and_a_missing_one_fails() -> None:
    hook = Gate("lab/hook")
    hook.down = False
    sinks = make(hook=hook)
    assert sinks.deliver(t(RUN_PHASE_CHANGED, "Running", ("hook",)))
    assert not sinks.deliver(t(TEST_COMPLETED, "a/n", ("hook", "gone")))
    assert len(hook.got) == 2
    assert sinks.states["lab/gone"].last_error == "BurnInSink lab/gone not found"
    assert sinks.states["lab/hook"].last_delivery == AT
    assert sinks.status_of("lab/hook").last_error is None
    assert sinks.status_of("lab/gone").last_error == "BurnInSink lab/gone not found"


def test_a_permanent_refusal_is_not_queued() -> None:
    refuses = Refuses()
    sinks = make(refuses)
    assert not sinks.deliver(t(RUN_PHASE_CHANGED, "Running"))
    assert refuses.tries == 1 and len(sinks.outbox) == 0
    assert "HTTP 400" in sinks.states["refuses"].last_error


def test_a_backlog_is_sent_in_order_and_nothing_overtakes_it() -> None:
    gate = Gate()
    sinks = make(gate)
    assert not sinks.deliver(t(RUN_PHASE_CHANGED, "Running"))
    assert gate.tries == 2  # the full policy for a fresh envelope
    assert not sinks.deliver(t(TEST_COMPLETED, "a/n"))
    assert gate.tries == 3  # behind a backlog: one probe, no policy
    assert not sinks.deliver(t(CHECKPOINT, "1", sequence=1))
    assert len(sinks.outbox) == 2  # checkpoints are never queued
    gate.down = False
    assert sinks.deliver(t(CHECKPOINT, "2", sequence=2))
    assert [e["reason"] for e in gate.got] == [RUN_PHASE_CHANGED, TEST_COMPLETED, CHECKPOINT]
    assert gate.got[0]["sentAt"] == "2026-09-01T00:00:00Z"


def test_a_sink_that_raises_anything_is_a_failed_delivery_not_an_exception() -> None:
    assert not make(Gate(bug=True)).deliver(t(RUN_PHASE_CHANGED, "Running"))


def test_an_invalid_envelope_is_never_sent() -> None:
    gate = Gate()
    gate.down = False
    sinks = make(gate)
    assert not sinks.deliver(t(RUN_PHASE_CHANGED, "Running", run=a_run(uid="")))
    assert not gate.tries and "run.uid is empty" in sinks.states["gate"].last_error


def test_resend_pending_leaves_envelopes_for_sinks_this_process_lacks() -> None:
    box = Outbox()
    gate = Gate()
    sinks = SinkSet(always=[gate], outbox=box, sender=Sender(OPERATOR_POLICY, FakeClock()))
    sinks.deliver(t(RUN_PHASE_CHANGED, "Running"))
    other = SinkSet(outbox=box)
    assert other.resend_pending() and len(box) == 1


def test_a_dead_sink_never_multiplies_envelopes_to_a_healthy_one() -> None:
    dead, healthy = Gate("dead"), Gate("healthy")
    healthy.down = False
    sinks = make(dead, healthy)
    passed = a_run(phase="Passed")
    # The terminal envelope is announced again while any sink still owes it.
    for _ in range(4):
        assert not sinks.deliver(t(RUN_PHASE_CHANGED, "Passed", run=passed))
    assert len(healthy.got) == 1 and dead.tries == 2 + 3  # the policy, then one probe each
    assert sinks.taken["healthy"] == 1
    # A body that says more under the same id reaches it again (receivers keep the latest).
    more = a_run(phase="Passed", fingerprint={"n": "kernel=6.8"})
    sinks.deliver(t(RUN_PHASE_CHANGED, "Passed", run=more))
    assert len(healthy.got) == 2
    assert {e["deliveryId"] for e in healthy.got} == {healthy.got[0]["deliveryId"]}
