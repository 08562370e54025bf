"""How the certification controllers run inside the operator: a kopf daemon per object, its
reconciles off kopf's loop, woken by the events of what it owns.

The skeleton is the BurnInRun daemons' (:mod:`glimmer.operator.daemon_loop`, shared with
:mod:`glimmer.operator.runs`): each Certification, Workflow and WorkloadRun kopf lists gets a
daemon that reconciles, then sleeps until the reconcile's requeue, a wake-up or kopf
stopping it; the safety-net requeue (:data:`SAFETY_NET`) bounds a
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
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import kopf

from glimmer.operator import daemon_loop
from glimmer.operator.daemon_loop import PASS_GRACE as PASS_GRACE
from glimmer.operator.passes import retry_after
from glimmer.operator.wakes import Key, Wakes

log = logging.getLogger("glimmer.operator.certify")

SAFETY_NET = 15.0  # §1: the safety-net requeue
# Reconciles of a deleting object before waiting for its next event: a Workflow waits for its
# Jobs (their pods drain first) at one reconcile a second, so this bounds an hour of waiting.
DELETION_TRIES = 3600

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
        failures = 0

        async def one_reconcile() -> float | None:
            nonlocal failures
            try:
                wait = await self.once(namespace, name)
                failures = 0
            except Exception:  # the API is the checkpoint: the next reconcile resumes
                failures += 1
                wait = retry_after(failures)
                log.warning(
                    "reconcile of %s %s/%s failed", self.plural, namespace, name, exc_info=True
                )
            # None: nothing can change but by an event (a terminal object); else at most the
            # safety net, so a missed event costs seconds, not the run.
            return None if wait is None else min(max(wait, 0.0), SAFETY_NET)

        await daemon_loop.drive(self.wakes, (namespace, name), stopped, one_reconcile)

    async def event(self, event: kopf.RawEvent) -> None:
        key = daemon_loop.own_event(event, self.wakes, self.finalizer)
        if key is not None and key not in self.deleting:
            self.deleting[key] = asyncio.ensure_future(self._delete(key))

    async def _delete(self, key: Key) -> None:
        """The deletion path until the controller lets the object go."""
        try:
            what = f"{self.plural} {key[0]}/{key[1]}"
            await daemon_loop.deletion(lambda: self.once(*key), DELETION_TRIES, what, log)
        finally:
            self.deleting.pop(key, None)

    def register(self, registry: kopf.OperatorRegistry) -> None:
        daemon_loop.register_daemon(
            registry,
            (self.group, self.version, self.plural),
            (f"{self.plural}-reconcile", f"{self.plural}-events"),
            self.drive,
            self.event,
        )


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
