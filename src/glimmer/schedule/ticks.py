"""Which tick is due at ``now`` (specs/burnin.md §7.1 step 6).

The ticks after the cursor up to ``now`` are walked in order. Only the latest one may fire, so a
controller back from an outage (or a schedule taken out of suspend) starts at most one run, never
a burst. A tick older than ``now - startingDeadlineSeconds`` is missed rather than fired late.
A backlog of more than 1000 ticks is not walked to its end: the cursor jumps to ``now`` and
nothing fires.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from glimmer.api.cadence import Cadence
from glimmer.schedule.keys import MAX_TICK_SCAN


@dataclass(frozen=True)
class Due:
    """What the walk found.

    ``tick``: the tick to act on (fire or, under Forbid, skip), or None. ``missed``: ticks that
    passed unfired. ``cursor``: where ``lastScheduleTime`` moves when nothing is due but ticks
    were passed (None: leave it); when a tick is due the caller moves it to that tick.
    ``resynced``: the backlog was too long to walk.
    """

    tick: datetime | None
    missed: int
    cursor: datetime | None
    resynced: bool = False


def due_tick(
    cadence: Cadence,
    since: datetime,
    now: datetime,
    starting_deadline_seconds: int | None = None,
) -> Due:
    """Walk ticks strictly after ``since`` and at or before ``now``."""
    latest: datetime | None = None
    walked = 0
    tick = cadence.next(since)
    while tick is not None and tick <= now:
        walked += 1
        if walked > MAX_TICK_SCAN:
            return Due(None, walked, now, resynced=True)
        latest = tick
        tick = cadence.next(tick)
    if latest is None:
        return Due(None, 0, None)
    if starting_deadline_seconds is not None and latest < now - timedelta(
        seconds=starting_deadline_seconds
    ):
        # Every tick is too old to start now; the cursor still moves past them so they are
        # counted once, not again on every later reconcile.
        return Due(None, walked, latest)
    return Due(latest, walked - 1, None)
