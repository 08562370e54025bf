"""One reconcile of a BurnInSchedule as a pure function (specs/burnin.md §7.1).

``decide(schedule, runs, now)`` reads the schedule (spec and status), the runs in its namespace
and the clock, and returns a :class:`Decision`: the actions to apply in order and when to be
called again. It reads no clock of its own and writes nothing, so a test can replay any history
and a driver (the simulator's virtual clock, an operator) applies the same decision.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from glimmer.api.cadence import ScheduleError, parse_cadence
from glimmer.api.run import BurnInRun
from glimmer.api.schedule import BurnInSchedule, BurnInScheduleStatus, ConcurrencyPolicy
from glimmer.contract.vocab import Phase
from glimmer.schedule.actions import Action, CreateRun, DeleteRun, WriteStatus
from glimmer.schedule.history import History, history, to_prune
from glimmer.schedule.keys import (
    INT32_MAX,
    MIN_REQUEUE_SECONDS,
    REASON_INVALID,
    REASON_PARSED,
    SCHEDULE_VALID,
)
from glimmer.schedule.observe import observe, run_ref, with_condition
from glimmer.schedule.stamp import stamp_run
from glimmer.schedule.ticks import due_tick


@dataclass(frozen=True)
class Decision:
    """What one reconcile decided.

    ``actions``: to apply in order. ``status``: the schedule's status once they are applied.
    ``requeue_after``: seconds until the next tick (at least 1), None when only a change to the
    schedule or its runs should wake it (invalid, suspended, or a schedule that never fires).
    ``fired``/``skipped``: the tick a run was created for, or skipped under Forbid.
    ``missed``: what this reconcile added to ``missedSchedules`` (ticks passed unfired, plus
    one for a Forbid skip). ``resynced``: a >1000-tick backlog moved the cursor to now.
    """

    actions: tuple[Action, ...]
    status: BurnInScheduleStatus
    requeue_after: float | None
    next_tick: datetime | None = None
    fired: datetime | None = None
    skipped: datetime | None = None
    missed: int = 0
    resynced: bool = False
    error: str | None = None

    @property
    def created(self) -> BurnInRun | None:
        """The run this decision creates, if any."""
        return next((a.run for a in self.actions if isinstance(a, CreateRun)), None)


def _prune(schedule: BurnInSchedule, found: History) -> list[Action]:
    spec = schedule.spec
    doomed = to_prune(found, spec.successful_runs_history_limit, spec.failed_runs_history_limit)
    return [DeleteRun(r.metadata.namespace or "default", r.name) for r in doomed]


def _write_if_changed(
    before: BurnInScheduleStatus | None, after: BurnInScheduleStatus
) -> list[Action]:
    same = before is not None and before.model_dump() == after.model_dump()
    return [] if same else [WriteStatus(after)]


def _utc(when: datetime) -> datetime:
    # A hand-written time without a zone is UTC, as the API server would read it.
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def decide(schedule: BurnInSchedule, runs: Iterable[BurnInRun], now: datetime) -> Decision:
    """Reconcile ``schedule`` at ``now`` (timezone-aware) against the runs it can see."""
    if now.tzinfo is None:
        raise ValueError("decide needs a timezone-aware now")
    spec = schedule.spec
    generation = schedule.metadata.generation
    before = schedule.status
    found = history(schedule, runs)
    status = observe(before or BurnInScheduleStatus(), found, generation)
    actions = _prune(schedule, found)

    try:
        cadence = parse_cadence(spec.schedule, spec.time_zone)
    except ScheduleError as e:
        status = with_condition(
            status,
            kind=SCHEDULE_VALID,
            true=False,
            reason=REASON_INVALID,
            message=str(e),
            now=now,
            generation=generation,
        )
        # Nothing to wake for: only an edit of the schedule can make it valid.
        return Decision((*actions, *_write_if_changed(before, status)), status, None, error=str(e))
    status = with_condition(
        status,
        kind=SCHEDULE_VALID,
        true=True,
        reason=REASON_PARSED,
        message=f"{cadence.text!r} in {spec.time_zone or 'UTC'}",
        now=now,
        generation=generation,
    )
    if spec.suspend:
        # The cursor stays where it was; on resume only the latest tick can fire.
        return Decision((*actions, *_write_if_changed(before, status)), status, None)

    since = status.last_schedule_time or schedule.metadata.creation_timestamp or now
    if since.tzinfo is None:
        since = since.replace(
            tzinfo=UTC
        )  # a hand-written time without a zone is UTC, as on the API
    due = due_tick(cadence, since, now, spec.starting_deadline_seconds)
    missed = due.missed
    cursor = due.cursor
    fire = due.tick is not None
    forbid = spec.concurrency_policy is not ConcurrencyPolicy.ALLOW
    skipped = None
    if due.tick is not None and forbid and found.active:
        cursor, skipped, fire = due.tick, due.tick, False
        missed += 1
    update: dict[str, object] = {}
    if missed:
        update["missed_schedules"] = min(INT32_MAX, status.missed_schedules + missed)
    if cursor is not None:
        update["last_schedule_time"] = cursor
    status = status.model_copy(update=update)

    fired = None
    if fire and due.tick is not None:
        fired = due.tick
        run = stamp_run(schedule, fired)
        # The cursor is durable before the run exists: a crash in between loses this tick
        # once instead of firing it twice.
        cursor_written = status.model_copy(update={"last_schedule_time": fired})
        status = cursor_written.model_copy(
            update={
                "last_run_name": run.name,
                "last_run_phase": Phase.PENDING,
                "active": [*(cursor_written.active or ()), run_ref(run)],
            }
        )
        actions += [WriteStatus(cursor_written), CreateRun(run), WriteStatus(status)]
    else:
        actions += _write_if_changed(before, status)

    next_tick = cadence.next(_utc(status.last_schedule_time or since))
    requeue = None
    if next_tick is not None:
        requeue = max(MIN_REQUEUE_SECONDS, (next_tick - now).total_seconds())
    return Decision(
        tuple(actions),
        status,
        requeue,
        next_tick=next_tick,
        fired=fired,
        skipped=skipped,
        missed=missed,
        resynced=due.resynced,
    )
