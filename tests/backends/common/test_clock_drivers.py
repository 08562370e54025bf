"""The drivers (backends/common/drivers.py): one virtual-clock driver (one run, many runs, the
schedule command, all over one wake-up table) and one wall-clock driver; the terminal-phase
set is the engine's own."""

from __future__ import annotations

from typing import Any

import pytest
from engine_world import GATE_MISCOMPARES, ScriptedRunner, reply, run_object, spec_of, world

from glimmer.backends.common import drivers
from glimmer.backends.common.drivers import RunWakes, drive_wall_clock, settled
from glimmer.backends.sim import driver as sim_driver
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import BackendError
from glimmer.engine.reconciler import TERMINAL_RUN_PHASES

GATED = spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])


def _world() -> Any:
    runner = ScriptedRunner(default="miscompares=0\nok").on(reply("miscompares=2"), node="node-001")
    w = world(2, {"a": GATED}, [{"testRef": "a"}], runner=runner)
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    return w


class Flaky:
    """An engine whose first ``fails`` passes lose a write race."""

    def __init__(self, engine: Any, fails: int) -> None:
        self.engine, self.fails, self.calls = engine, fails, 0

    def reconcile(self, namespace: str, name: str) -> Any:
        self.calls += 1
        if self.calls <= self.fails:
            raise BackendError("conflict")
        return self.engine.reconcile(namespace, name)


def test_the_terminal_phase_set_is_defined_once_by_the_engine() -> None:
    assert drivers.TERMINAL is TERMINAL_RUN_PHASES and sim_driver.TERMINAL is TERMINAL_RUN_PHASES
    assert Phase.SKIPPED not in drivers.TERMINAL  # a run is never Skipped; a result may be


def test_the_wall_clock_driver_sleeps_for_the_wake_up_at_most_poll_until_the_run_settles() -> None:
    virtual = _world()
    expected = virtual.drive().run.status.phase
    w = _world()
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        w.backend.advance(w.backend.t + seconds)  # real time passing, as the substrate sees it

    final = drive_wall_clock(w.backend, w.engine, "default", "run", poll=30.0, sleep=sleep)
    assert final is not None and settled(final)
    assert final.status.phase is expected is Phase.FAILED
    assert slept and all(0 < s <= 30.0 for s in slept)


def test_the_wall_clock_driver_retries_a_failed_pass_after_poll() -> None:
    w = _world()
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        w.backend.advance(w.backend.t + seconds)

    flaky = Flaky(w.engine, fails=2)
    final = drive_wall_clock(w.backend, flaky, "default", "run", poll=5.0, sleep=sleep)  # type: ignore[arg-type]
    assert final is not None and settled(final)
    assert slept[:2] == [5.0, 5.0]


def test_the_wall_clock_driver_stops_when_the_run_is_gone() -> None:
    w = _world()
    w.backend.delete_run("default", "run")
    assert drive_wall_clock(w.backend, w.engine, "default", "run", sleep=lambda s: None) is None


def test_run_wakes_calls_a_settled_run_once_and_drops_it() -> None:
    w = _world()
    wakes = RunWakes()
    wakes.add(("default", "run"), w.backend.t)
    done: list[Any] = []
    while wakes.wake:
        wakes.pass_due(w.backend, w.engine, done.append)
        if wakes.wake and wakes.next_wake() > w.backend.t:
            assert w.backend.advance(wakes.next_wake())
    assert [r.name for r in done] == ["run"] and settled(done[0])
    assert wakes.last is done[0] and wakes.passes > 1


def test_run_wakes_retry_a_lost_race_up_to_the_bound_then_raise() -> None:
    w = _world()
    patient = RunWakes(max_retries=3)
    patient.add(("default", "run"), w.backend.t)
    flaky = Flaky(w.engine, fails=3)
    for _ in range(4):
        patient.pass_due(w.backend, flaky)  # type: ignore[arg-type]
    assert patient.passes == 1 and not patient.failures
    strict = RunWakes()
    strict.add(("default", "run"), w.backend.t)
    with pytest.raises(BackendError):
        strict.pass_due(w.backend, Flaky(w.engine, fails=1))  # type: ignore[arg-type]


def test_a_run_whose_executions_changed_is_due_at_once() -> None:
    w = _world()
    wakes = RunWakes()
    wakes.add(("default", "run"), w.backend.t)
    wakes.pass_due(w.backend, w.engine)
    uid = w.run().metadata.uid
    wakes.wake[("default", "run")] = float("inf")  # asked to be left alone...
    w.backend.touched.add(uid)  # ...but one of its executions changed
    before = wakes.passes
    wakes.pass_due(w.backend, w.engine)
    assert wakes.passes == before + 1


class Impatient:
    """An engine that asks to be called again at once, every time."""

    def __init__(self) -> None:
        self.calls = 0

    def reconcile(self, namespace: str, name: str) -> Any:
        self.calls += 1
        return type("Outcome", (), {"requeue_after": 0})()


def test_a_run_asking_to_be_called_again_at_once_forever_is_stopped_in_every_drive() -> None:
    w = _world()
    with pytest.raises(drivers.StuckRun):
        drivers.drive(w.backend, Impatient(), "default", "run")  # type: ignore[arg-type]
    engine = Impatient()
    with pytest.raises(drivers.StuckRun):
        drivers.drive_many(w.backend, engine, [("default", "run")])  # type: ignore[arg-type]
    assert engine.calls == drivers.MAX_IMMEDIATE + 1


def test_a_wake_up_moved_later_leaves_no_earlier_wake_behind() -> None:
    wakes = RunWakes()
    wakes.add(("default", "a"), 10.0)
    wakes.add(("default", "b"), 20.0)
    wakes.add(("default", "a"), 30.0)  # asked again, later: the 10 s entry is stale
    assert wakes.next_wake() == 20.0
    wakes.wake[("default", "b")] = float("inf")  # left alone until its executions change
    assert wakes.next_wake() == 30.0


def test_a_torn_down_run_whose_sink_never_answers_is_dropped_after_the_grace() -> None:
    healthy = _world()
    delivered = drivers.drive(healthy.backend, healthy.engine, "default", "run")
    w = _world()
    w.backend.sinks_ok = False  # every delivery fails: the verdict is never delivered
    grace = 1800.0
    done = drivers.drive(w.backend, w.engine, "default", "run", delivery_grace=grace)
    assert drivers.torn_down(done.run) and not settled(done.run)
    assert done.run.status.phase is delivered.run.status.phase is Phase.FAILED
    # Driven to the same verdict, then re-sent for the grace and no longer.
    assert done.simulated_seconds == pytest.approx(delivered.simulated_seconds + grace, abs=1.0)
