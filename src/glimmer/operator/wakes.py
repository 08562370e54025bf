"""A wake-up per run: what a run's daemon sleeps on between passes.

Events (the run changed, one of its pods changed) set the run's wake; the daemon sleeps until
its wake is set, the Outcome's requeue time comes, or kopf stops it — whichever is first. A
burst of pod events (a wave of pods starting) costs one pass, not one per event: the daemon
clears the wake before its pass, and waits :data:`SETTLE` after a wake-up so the rest of the
burst lands first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

Key = tuple[str, str]  # (namespace, run name)


def key_of(meta: Mapping[str, Any]) -> Key:
    """The (namespace, name) an object's metadata names; a cluster-scoped or unnamespaced
    object counts as ``default``'s, as the daemons key it."""
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


SETTLE = 0.1  # seconds a woken daemon waits for the rest of a burst of events


class Wakes:
    """The wake events of every run this process follows (all on kopf's loop)."""

    def __init__(self) -> None:
        self._events: dict[Key, asyncio.Event] = {}

    def of(self, key: Key) -> asyncio.Event:
        event = self._events.get(key)
        if event is None:
            event = self._events[key] = asyncio.Event()
        return event

    def wake(self, key: Key) -> None:
        """Ask for a pass over ``key`` soon (nothing if no daemon follows it yet: its first
        pass comes when it starts)."""
        self.of(key).set()

    def forget(self, key: Key) -> None:
        self._events.pop(key, None)

    def __len__(self) -> int:
        return len(self._events)

    async def sleep(self, key: Key, seconds: float | None, stopped: asyncio.Future[Any]) -> bool:
        """Sleep until ``key`` is woken, ``seconds`` pass (None: no timeout), or ``stopped``
        completes. True when woken (or when the time came), False when stopped."""
        event = self.of(key)
        woken = asyncio.ensure_future(event.wait())
        try:
            done, _ = await asyncio.wait(
                {woken, stopped}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            woken.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await woken
        if stopped in done:
            return False
        if woken in done:
            await asyncio.sleep(SETTLE)
        return True
