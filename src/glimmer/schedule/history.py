"""The runs a schedule owns, newest first, and which finished ones history pruning deletes
(specs/burnin.md §7.1 steps 1 and 3).

Ownership is the controller owner reference, never the label alone: a run someone labelled by
hand is not the schedule's to count or delete. Successful (Passed) and failed (every other
terminal phase) runs are kept to separate limits, so a string of passes never pushes out the
failures an operator needs to compare against. Active runs are never deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from glimmer.api.run import BurnInRun
from glimmer.api.schedule import BurnInSchedule
from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.schedule.keys import SCHEDULED_AT_ANNOTATION

_EARLIEST = datetime.min.replace(tzinfo=UTC)


def owns(schedule: BurnInSchedule, run: BurnInRun) -> bool:
    """Whether ``run`` is controlled by ``schedule`` (same namespace, controller reference)."""
    if (run.metadata.namespace or "default") != (schedule.metadata.namespace or "default"):
        return False
    for ref in run.metadata.owner_references or ():
        if not ref.controller or ref.kind != schedule.KIND or ref.name != schedule.name:
            continue
        if schedule.metadata.uid and ref.uid and ref.uid != schedule.metadata.uid:
            continue  # a namesake schedule deleted and recreated does not inherit its runs
        return True
    return False


def phase_of(run: BurnInRun) -> Phase:
    """The run's phase; a run with no status yet is Pending."""
    return run.status.phase if run.status is not None else Phase.PENDING


def is_active(run: BurnInRun) -> bool:
    return phase_of(run) not in TERMINAL_PHASES


def scheduled_at(run: BurnInRun) -> datetime:
    """The tick a run was created for (annotation), else its creation time."""
    text = (run.metadata.annotations or {}).get(SCHEDULED_AT_ANNOTATION)
    if text:
        try:
            return _aware(datetime.fromisoformat(text))
        except ValueError:
            pass  # a hand-edited annotation falls back to the creation time
    created = run.metadata.creation_timestamp
    return _aware(created) if created is not None else _EARLIEST


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def newest_first(runs: Iterable[BurnInRun]) -> list[BurnInRun]:
    """Runs sorted newest first by tick; equal ticks by name, descending."""
    return sorted(runs, key=lambda r: (scheduled_at(r), r.name), reverse=True)


@dataclass(frozen=True)
class History:
    """A schedule's owned runs, newest first, split by whether they are still going."""

    runs: tuple[BurnInRun, ...]

    @property
    def active(self) -> tuple[BurnInRun, ...]:
        return tuple(r for r in self.runs if is_active(r))

    @property
    def finished(self) -> tuple[BurnInRun, ...]:
        return tuple(r for r in self.runs if not is_active(r))

    @property
    def newest(self) -> BurnInRun | None:
        return self.runs[0] if self.runs else None


def history(schedule: BurnInSchedule, runs: Iterable[BurnInRun]) -> History:
    """The runs ``schedule`` owns among ``runs``; others are ignored."""
    return History(tuple(newest_first(r for r in runs if owns(schedule, r))))


def to_prune(found: History, successful_limit: int, failed_limit: int) -> list[BurnInRun]:
    """Finished runs beyond their limit, oldest first."""
    passed = [r for r in found.finished if phase_of(r) is Phase.PASSED]
    failed = [r for r in found.finished if phase_of(r) is not Phase.PASSED]
    doomed = passed[max(successful_limit, 0) :] + failed[max(failed_limit, 0) :]
    return list(reversed(newest_first(doomed)))
