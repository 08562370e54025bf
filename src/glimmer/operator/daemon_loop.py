"""The skeleton every per-object daemon of the operator shares: the BurnInRun daemons
(:mod:`glimmer.operator.runs`) and the certification controllers'
(:mod:`glimmer.operator.certify.certification_daemons`).

* :func:`drive`: work, then sleep until the work's requeue, a wake-up or kopf stopping the
  daemon; a wake that comes while the work runs asks for another round.
* :func:`own_event`: an event of the object itself only wakes its daemon, forgets it once
  DELETED, and says when the deletion path is due (``deletionTimestamp`` set and the
  controller's finalizer still there: kopf has stopped the daemon by then).
* :func:`deletion`: the deletion path, retried, until the work says the object is let go.
* :func:`register_daemon`: the daemon (never cancelled mid-round: :data:`PASS_GRACE`, and
  without kopf's own finalizer) and the object's event handler.

What differs between the controllers — what a round is, how a failure is retried, how many
deletion rounds to try — is the caller's, as parameters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import kopf

from glimmer.operator.daemons import without_kopf_finalizer
from glimmer.operator.passes import retry_after
from glimmer.operator.wakes import Key, Wakes, key_of

# How long kopf waits for a stopped daemon (a pause for another leader, SIGTERM) to finish the
# round it is in before leaving it orphaned: never cancelled mid-round, and within Kubernetes'
# default 30 s termination grace. Without it kopf orphans a busy daemon at once, and its round
# could overlap the next leader's first.
PASS_GRACE = 25.0

Round = Callable[[], Awaitable[float | None]]


async def drive(wakes: Wakes, key: Key, stopped: kopf.DaemonStopped, work: Round) -> None:
    """Rounds of ``work`` until kopf stops the daemon, each followed by a sleep of what it
    returned (None: until a wake-up)."""
    stop = asyncio.ensure_future(stopped.wait())
    try:
        while not stopped:
            wakes.of(key).clear()  # an event from here on asks for another round
            seconds = await work()
            if not await wakes.sleep(key, seconds, stop):
                break
    finally:
        stop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stop


def own_event(event: Mapping[str, Any], wakes: Wakes, finalizer: str) -> Key | None:
    """Route an event of the object itself: the key when its deletion path is due, else None
    (the daemon woken, or forgotten once the object is gone)."""
    meta = (event.get("object") or {}).get("metadata") or {}
    key = key_of(meta)
    if event.get("type") == "DELETED":
        wakes.forget(key)
        return None
    if meta.get("deletionTimestamp") and finalizer in (meta.get("finalizers") or ()):
        return key
    wakes.wake(key)
    return None


async def deletion(work: Round, tries: int, what: str, log: logging.Logger) -> None:
    """Rounds of ``work`` until it returns None (the object let go), sleeping what it returns
    between them; a failed round is retried after a backoff; at most ``tries`` rounds, then
    the next event of the object starts again."""
    failures = 0
    for _ in range(tries):
        try:
            wait = await work()
        except Exception:  # retried below; the next event or a restart retries as well
            failures += 1
            log.warning("deletion of %s failed", what, exc_info=True)
            await asyncio.sleep(retry_after(failures))
            continue
        if wait is None:
            return
        await asyncio.sleep(wait)


def register_daemon(
    registry: kopf.OperatorRegistry,
    resource: tuple[str, str, str],
    ids: tuple[str, str],
    daemon: Callable[[str, str, kopf.DaemonStopped], Awaitable[None]],
    on_event: Callable[[kopf.RawEvent], Awaitable[None]],
) -> None:
    """The daemon ``daemon(namespace, name, stopped)`` of every ``resource`` (group, version,
    plural) object and its event handler ``on_event``, under ``ids`` (daemon, events)."""
    group, version, plural = resource
    daemon_id, event_id = ids

    async def drive_one(
        name: str, namespace: str | None, stopped: kopf.DaemonStopped, **_: Any
    ) -> None:
        await daemon(namespace or "default", name, stopped)

    async def event_one(event: kopf.RawEvent, **_: Any) -> None:
        await on_event(event)

    kopf.daemon(
        group, version, plural, id=daemon_id, cancellation_backoff=PASS_GRACE, registry=registry
    )(drive_one)
    without_kopf_finalizer(registry, daemon_id)
    kopf.on.event(group, version, plural, id=event_id, registry=registry)(event_one)
