"""The run handlers' plumbing without a cluster: a run's daemon passes at once, again when an
event wakes it or its Outcome's time comes, and stops when kopf says; pod events wake the run
their label names; kopf is told to keep its finalizer off and its progress in annotations."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import kopf

from glimmer.engine.keys import RUN_LABEL
from glimmer.engine.wake import Outcome
from glimmer.operator import runs
from glimmer.operator.runs import DAEMON_ID, PASS_GRACE, RunHandlers
from glimmer.operator.settings import KOPF_PREFIX, operator_settings


class Engine:
    """Records its passes; answers the outcomes it is given, then None."""

    def __init__(self, *outcomes: float | None, fail: int = 0) -> None:
        self.outcomes = list(outcomes)
        self.fail = fail
        self.passes: list[tuple[str, str]] = []

    def reconcile(self, namespace: str, name: str) -> Outcome:
        self.passes.append((namespace, name))
        if self.fail:
            self.fail -= 1
            raise RuntimeError("409 Conflict")
        return Outcome(self.outcomes.pop(0) if self.outcomes else None)


class Stopped:
    """kopf's DaemonStopped, as a daemon uses it: falsy until set, awaitable ``wait()``."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def __bool__(self) -> bool:
        return self.event.is_set()

    def wait(self) -> Any:
        return self.event.wait()


def handlers(engine: Engine) -> RunHandlers:
    return RunHandlers(SimpleNamespace(engine=engine))  # type: ignore[arg-type]


async def until(check: Any) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never happened")


def test_a_daemon_passes_at_once_on_a_wake_and_at_its_outcomes_time_until_stopped() -> None:
    engine = Engine(0.05, None)
    h = handlers(engine)

    async def scenario() -> None:
        stopped = Stopped()
        task = asyncio.create_task(h.drive("burn", "r1", stopped))  # type: ignore[arg-type]
        await until(lambda: len(engine.passes) == 2)  # the first, then its outcome's 0.05 s
        await asyncio.sleep(0.2)
        assert len(engine.passes) == 2  # None: nothing until something changes
        h.wakes.wake(("burn", "r1"))
        await until(lambda: len(engine.passes) == 3)
        stopped.event.set()
        await asyncio.wait_for(task, timeout=5)

    asyncio.run(scenario())
    assert set(engine.passes) == {("burn", "r1")}
    h.passes.close()


def test_a_failed_pass_is_retried_by_the_daemon() -> None:
    engine = Engine(None, fail=2)
    h = handlers(engine)

    async def scenario() -> None:
        stopped = Stopped()
        task = asyncio.create_task(h.drive("burn", "r1", stopped))  # type: ignore[arg-type]
        await until(lambda: len(engine.passes) == 3)  # two failures, then the pass that works
        stopped.event.set()
        await asyncio.wait_for(task, timeout=5)

    asyncio.run(scenario())
    h.passes.close()


def test_a_pod_event_wakes_the_run_its_label_names_and_only_that() -> None:
    h = handlers(Engine())

    async def scenario() -> None:
        pod = {"metadata": {"namespace": "burn", "name": "p", "labels": {RUN_LABEL: "r1"}}}
        h.pod_event({"type": "MODIFIED", "object": pod})  # type: ignore[typeddict-item]
        h.pod_event({"type": "MODIFIED", "object": {"metadata": {"name": "other"}}})  # type: ignore[typeddict-item]
        assert h.wakes.of(("burn", "r1")).is_set()
        assert len(h.wakes) == 1

    asyncio.run(scenario())
    h.passes.close()


def test_a_run_event_wakes_the_run_and_its_deletion_forgets_it() -> None:
    h = handlers(Engine())

    async def scenario() -> None:
        body = {"metadata": {"namespace": "burn", "name": "r1"}}
        await h.run_event({"type": "MODIFIED", "object": body})  # type: ignore[typeddict-item]
        assert h.wakes.of(("burn", "r1")).is_set()
        await h.run_event({"type": "DELETED", "object": body})  # type: ignore[typeddict-item]
        assert len(h.wakes) == 0

    asyncio.run(scenario())
    h.passes.close()


def test_the_run_daemon_asks_kopf_for_no_finalizer_and_is_never_cancelled_mid_pass() -> None:
    registry = kopf.OperatorRegistry()
    runs.register(registry, SimpleNamespace(engine=Engine()))  # type: ignore[arg-type]
    (daemon,) = [h for h in registry._spawning._handlers if h.id == DAEMON_ID]
    assert daemon.requires_finalizer is False
    assert daemon.cancellation_backoff == PASS_GRACE  # a stopped daemon finishes its pass
    assert daemon.cancellation_timeout is None  # and is never cancelled
    assert all(not h.requires_finalizer for h in registry._changing._handlers)


def test_kopf_keeps_progress_in_glimmer_prefixed_annotations_and_posts_no_events() -> None:
    settings = operator_settings()
    assert isinstance(settings.persistence.progress_storage, kopf.AnnotationsProgressStorage)
    assert isinstance(settings.persistence.diffbase_storage, kopf.AnnotationsDiffBaseStorage)
    assert settings.persistence.progress_storage.prefix == KOPF_PREFIX
    assert settings.posting.enabled is False
