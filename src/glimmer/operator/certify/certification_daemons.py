"""How the certification controllers run inside the operator: a kopf daemon per object, its
reconciles off kopf's loop, woken by the events of what it owns.

Like the BurnInRun daemons (:mod:`glimmer.operator.runs`): each Certification, Workflow and
WorkloadRun kopf lists gets a daemon that reconciles, then sleeps until the reconcile's
requeue, a wake-up or kopf stopping it; the safety-net requeue (:data:`SAFETY_NET`) bounds a
missed event while the object waits on others (a terminal object sleeps until an event).
Events only wake: a Job's (label ``certify.glimmer.ai/workflow``) wakes its Workflow, a
Workflow's wakes the Certification or WorkloadRun that made it, each object's own wakes
itself. Reconciles are synchronous API work, so they run on a small thread pool of their
own (the engine's single pass thread is left to burn-in runs); two reconciles of one object
never overlap, because only its daemon or its deletion path reconciles it.

kopf stops a daemon once ``deletionTimestamp`` is set; the object's event handler then drives
the deletion path (reconcile until the controller's finalizer is gone), as a task per object.
No kopf finalizer is added (:func:`glimmer.operator.daemons.without_kopf_finalizer`): each
controller holds its object with its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import kopf

from glimmer.operator.daemons import without_kopf_finalizer
from glimmer.operator.passes import retry_after
from glimmer.operator.wakes import Key, Wakes, key_of

log = logging.getLogger("glimmer.operator.certify")

SAFETY_NET = 15.0  # §1: the safety-net requeue
# Reconciles of a deleting object before waiting for its next event: a Workflow waits for its
# Jobs (their pods drain first) at one reconcile a second, so this bounds an hour of waiting.
DELETION_TRIES = 3600
PASS_GRACE = 25.0  # as runs.PASS_GRACE: a reconcile in flight is never cancelled mid-way

Reconcile = Callable[[str, str], float | None]


@dataclass
class Kind:
    """One kind's daemon: its reconcile, finalizer and wakes."""

    group: str
    version: str
    plural: str
    reconcile: Reconcile
    finalizer: str
    pool: ThreadPoolExecutor
    wakes: Wakes = field(default_factory=Wakes)
    deleting: dict[Key, asyncio.Task[None]] = field(default_factory=dict)

    async def once(self, namespace: str, name: str) -> float | None:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.pool, self.reconcile, namespace, name)

    async def drive(self, namespace: str, name: str, stopped: kopf.DaemonStopped) -> None:
        key: Key = (namespace, name)
        stop = asyncio.ensure_future(stopped.wait())
        failures = 0
        try:
            while not stopped:
                self.wakes.of(key).clear()
                try:
                    wait = await self.once(namespace, name)
                    failures = 0
                except Exception:  # the API is the checkpoint: the next reconcile resumes
                    failures += 1
                    wait = retry_after(failures)
                    log.warning("reconcile of %s %s/%s failed", self.plural, *key, exc_info=True)
                # None: nothing can change but by an event (a terminal object); else at most
                # the safety net, so a missed event costs seconds, not the run.
                seconds = None if wait is None else min(max(wait, 0.0), SAFETY_NET)
                if not await self.wakes.sleep(key, seconds, stop):
                    break
        finally:
            stop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stop

    async def event(self, event: kopf.RawEvent) -> None:
        body = event.get("object") or {}
        meta = body.get("metadata") or {}
        key = key_of(meta)
        if event.get("type") == "DELETED":
            self.wakes.forget(key)
            return
        if meta.get("deletionTimestamp") and self.finalizer in (meta.get("finalizers") or ()):
            if key not in self.deleting:
                self.deleting[key] = asyncio.ensure_future(self._delete(key))
            return
        self.wakes.wake(key)

    async def _delete(self, key: Key) -> None:
        """The deletion path until the controller lets the object go."""
        failures = 0
        try:
            for _ in range(DELETION_TRIES):
                try:
                    wait = await self.once(*key)
                except Exception:
                    failures += 1
                    log.warning("deletion of %s %s/%s failed", self.plural, *key, exc_info=True)
                    await asyncio.sleep(retry_after(failures))
                    continue
                if wait is None:
                    return
                await asyncio.sleep(wait)
        finally:
            self.deleting.pop(key, None)

    def register(self, registry: kopf.OperatorRegistry) -> None:
        daemon_id = f"{self.plural}-reconcile"

        async def drive(
            name: str, namespace: str | None, stopped: kopf.DaemonStopped, **_: Any
        ) -> None:
            await self.drive(namespace or "default", name, stopped)

        async def on_event(event: kopf.RawEvent, **_: Any) -> None:
            await self.event(event)

        kopf.daemon(
            self.group,
            self.version,
            self.plural,
            id=daemon_id,
            cancellation_backoff=PASS_GRACE,
            registry=registry,
        )(drive)
        without_kopf_finalizer(registry, daemon_id)
        kopf.on.event(
            self.group, self.version, self.plural, id=f"{self.plural}-events", registry=registry
        )(on_event)


def wake_by_label(
    registry: kopf.OperatorRegistry,
    group: str,
    version: str,
    plural: str,
    label: str,
    target: Kind,
) -> None:
    """Events of ``plural`` objects carrying ``label`` wake the ``target`` object the label
    names (in the same namespace)."""

    async def on_event(event: kopf.RawEvent, **_: Any) -> None:
        meta = (event.get("object") or {}).get("metadata") or {}
        owner = (meta.get("labels") or {}).get(label)
        if owner:
            target.wakes.wake((str(meta.get("namespace") or "default"), str(owner)))

    kopf.on.event(
        group,
        version,
        plural,
        id=f"{plural}-wake-{target.plural}",
        labels={label: kopf.PRESENT},
        registry=registry,
    )(on_event)
