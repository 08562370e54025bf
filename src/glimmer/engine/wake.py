"""When a run should be looked at again (§2.6 nextWake). Week-long soaks were once polled every
30 s; now it is 5 minutes once everything started, 30 s while something has not, 5 s during a
rendezvous, sooner for a due checkpoint or the run deadline — and never zero or negative."""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.engine.context import Pass
from glimmer.engine.keys import RENDEZVOUS_POLL, SETTLED_POLL, WAITING_POLL

MIN_WAKE = 1.0


@dataclass(frozen=True)
class Outcome:
    """What a pass asks of its caller: come back after ``requeue_after`` seconds (0: at once),
    or None: only when something changes."""

    requeue_after: float | None


def next_wake(ctx: Pass) -> float:
    wake = WAITING_POLL if ctx.awaiting_start else SETTLED_POLL
    if ctx.in_flight_intervals:
        wake = min(wake, float(min(ctx.in_flight_intervals)))
    deadline = ctx.run.spec.deadline_seconds or 0
    started = ctx.run.status.started_at if ctx.run.status else None
    if deadline > 0 and started is not None:
        remaining = deadline - (ctx.now - started).total_seconds()
        wake = min(wake, remaining + MIN_WAKE)  # strictly past the deadline
    if ctx.rendezvous:
        wake = min(wake, RENDEZVOUS_POLL)
    return max(wake, MIN_WAKE)
