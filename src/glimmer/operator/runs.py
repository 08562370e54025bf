"""BurnInRun handling: events in, engine passes out — every decision is the engine's.

* **A daemon per run** (kopf's, resumed for every run kopf lists when the operator starts or
  a paused replica becomes the leader): pass, then sleep until the Outcome's wake, a wake-up,
  or kopf stopping it. Why a daemon and not a timer: the wake is the engine's, different after
  every pass (1 s in a rendezvous, 5 min in a settled soak, None when nothing can change), and
  a timer's interval is fixed when it is declared; a daemon also stops by itself when kopf
  pauses for a leader with a higher priority.
* **Events** (the run or one of its pods changed) only wake the run's daemon. Pods are watched
  by the run label, server-side (:mod:`.settings`), so a finished execution is harvested at
  once instead of at the next timed wake.
* **Deletion**: kopf stops a run's daemon once ``deletionTimestamp`` is set; the run's event
  handler then makes the engine's deleted-path passes (stop the load, release the cordons,
  drop ``burnin.glimmer.ai/cordon-cleanup``) until the finalizer is gone, retrying a failure.

kopf's own finalizer is never added: kopf forces one on every daemon, for its stop protocol;
here a daemon holds nothing that needs one (the engine's finalizer holds the run until its
cordons are released, and the deleted path is driven from events), so the daemon is
registered without it. Handlers store nothing (no progress, no last-handled configuration):
the run's status is the only checkpoint.
"""

from __future__ import annotations

import logging
from typing import Any

import kopf

from glimmer.engine.keys import FINALIZER, RUN_LABEL
from glimmer.operator import daemon_loop
from glimmer.operator.context import OperatorContext
from glimmer.operator.daemon_loop import PASS_GRACE as PASS_GRACE
from glimmer.operator.passes import Passes
from glimmer.operator.wakes import Key, Wakes

GROUP, VERSION, PLURAL = "burnin.glimmer.ai", "v1alpha1", "burninruns"
DAEMON_ID = "burninrun-passes"
RUN_EVENT_ID = "burninrun-events"
POD_EVENT_ID = "runner-pod-events"
DELETION_TRIES = 20  # passes over a deleting run before waiting for its next event

log = logging.getLogger("glimmer.operator.runs")


class RunHandlers:
    """The handlers' shared state: the passes and the wake-ups."""

    def __init__(self, context: OperatorContext) -> None:
        self.context = context
        self.passes = Passes(context.engine)
        self.wakes = Wakes()

    async def drive(self, namespace: str, name: str, stopped: kopf.DaemonStopped) -> None:
        """The run's daemon: passes at the engine's wakes until kopf stops it."""
        failures = 0

        async def one_pass() -> float | None:
            nonlocal failures
            outcome, failures = await self.passes.attempt(namespace, name, failures)
            return outcome.requeue_after

        await daemon_loop.drive(self.wakes, (namespace, name), stopped, one_pass)

    async def run_event(self, event: kopf.RawEvent) -> None:
        key: Key | None = daemon_loop.own_event(event, self.wakes, FINALIZER)
        if key is not None:
            await self.delete(*key)

    async def delete(self, namespace: str, name: str) -> None:
        """The deleted path until it has let the run go (its finalizer dropped)."""

        async def one_pass() -> None:
            await self.passes.reconcile(namespace, name)

        await daemon_loop.deletion(one_pass, DELETION_TRIES, f"run {namespace}/{name}", log)

    def pod_event(self, event: kopf.RawEvent) -> None:
        meta = (event.get("object") or {}).get("metadata") or {}
        run = (meta.get("labels") or {}).get(RUN_LABEL)
        if run:
            self.wakes.wake((str(meta.get("namespace") or "default"), str(run)))


def register(registry: kopf.OperatorRegistry, context: OperatorContext) -> RunHandlers:
    """The BurnInRun daemon and the run and pod event handlers, on ``registry``; their shared
    state (its passes drain before the operator stops)."""
    handlers = RunHandlers(context)

    async def on_pod(event: kopf.RawEvent, **_: Any) -> None:
        handlers.pod_event(event)

    daemon_loop.register_daemon(
        registry, (GROUP, VERSION, PLURAL), (DAEMON_ID, RUN_EVENT_ID), handlers.drive,
        handlers.run_event,
    )  # fmt: skip
    kopf.on.event(
        "", "v1", "pods", id=POD_EVENT_ID, labels={RUN_LABEL: kopf.PRESENT}, registry=registry
    )(on_pod)

    @kopf.on.cleanup(id="burninrun-passes-close", registry=registry)
    async def close(**_: Any) -> None:
        handlers.passes.close()

    return handlers
