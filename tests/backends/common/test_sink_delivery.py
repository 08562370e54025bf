"""The one delivery component over sinks/ (backends/common/delivery.py): what the engine hands
becomes the sinks' Transition, is recorded without its view, and reports a refusing sink."""

from __future__ import annotations

from typing import Any

from engine_world import ScriptedRunner, run_object, spec_of, world

from glimmer.backends.common.delivery import SinkDelivery
from glimmer.engine.backend import Delivery
from glimmer.sinks.envelope import Transition


class Sinks:
    """A SinkSet double: takes (or refuses) transitions and remembers forgotten runs."""

    def __init__(self, accept: bool = True) -> None:
        self.accept = accept
        self.got: list[Transition] = []
        self.forgotten: list[str] = []

    def deliver(self, transition: Transition) -> bool:
        self.got.append(transition)
        return self.accept

    def forget_run(self, uid: str) -> None:
        self.forgotten.append(uid)


def _run() -> Any:
    w = world(1, {"a": spec_of("gpu-burn")}, [{"testRef": "a"}], runner=ScriptedRunner("ok"))
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    return w.run()


def _delivery(view: Any) -> Delivery:
    return Delivery("RunPhaseChanged", "default", "run", "uid-1", "Passed", "Passed", view=view)


def test_a_delivery_reaches_the_sinks_as_a_transition_and_is_recorded_without_its_view() -> None:
    sinks = Sinks()
    out = SinkDelivery(sinks)  # type: ignore[arg-type]
    run = _run()
    assert out.describes_runs
    assert out.deliver(_delivery(run))
    (transition,) = sinks.got
    assert (transition.reason, transition.key, transition.run) == ("RunPhaseChanged", "Passed", run)
    (recorded,) = out.recorded
    assert recorded.view is None and recorded.key == "Passed"


def test_without_sinks_deliveries_are_only_recorded_and_runs_are_not_described() -> None:
    out = SinkDelivery()
    assert not out.describes_runs
    assert out.deliver(_delivery(None))
    assert len(out.recorded) == 1


def test_a_refusing_sink_or_an_injected_failure_reports_the_delivery_failed() -> None:
    run = _run()
    assert not SinkDelivery(Sinks(accept=False)).deliver(_delivery(run))  # type: ignore[arg-type]
    failing = SinkDelivery()
    failing.ok = False
    assert not failing.deliver(_delivery(None))


def test_a_forgotten_run_is_forgotten_by_the_sinks() -> None:
    sinks = Sinks()
    SinkDelivery(sinks).forget_run("uid-1")  # type: ignore[arg-type]
    SinkDelivery().forget_run("uid-2")  # nothing to forget in: not an error
    assert sinks.forgotten == ["uid-1"]


def test_the_simulator_delivers_through_the_common_component() -> None:
    sinks = Sinks()
    w = world(1, {"a": spec_of("gpu-burn")}, [{"testRef": "a"}], runner=ScriptedRunner("ok"))
    w.backend.sink_set = sinks  # type: ignore[assignment]
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    assert isinstance(w.backend.delivery, SinkDelivery)
    assert w.backend.deliveries is w.backend.delivery.recorded and sinks.got
    assert [t.reason for t in sinks.got][-1] == "RunPhaseChanged"
