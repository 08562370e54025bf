"""The parts of a schedule's status that are read off its runs (specs/burnin.md §7.1 step 2)
and its ``ScheduleValid`` condition."""

from __future__ import annotations

from datetime import UTC, datetime

from glimmer.api.k8s import Condition, ObjectReference
from glimmer.api.meta import API_VERSION
from glimmer.api.run import BurnInRun
from glimmer.api.schedule import BurnInScheduleStatus
from glimmer.contract.vocab import Phase
from glimmer.schedule.history import History, phase_of, scheduled_at

CONDITION_MESSAGE_MAX = 1024


def run_ref(run: BurnInRun) -> ObjectReference:
    """A reference to ``run`` for ``status.active`` (uid once the API server gave it one)."""
    data: dict[str, str] = {
        "apiVersion": API_VERSION,
        "kind": BurnInRun.KIND,
        "name": run.name,
        "namespace": run.metadata.namespace or "default",
    }
    if run.metadata.uid:
        data["uid"] = run.metadata.uid
    return ObjectReference.model_validate(data)


def _finished_at(run: BurnInRun) -> datetime | None:
    when = run.status.finished_at if run.status is not None else None
    when = when or run.metadata.creation_timestamp
    if when is None:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def observe(
    previous: BurnInScheduleStatus, found: History, generation: int | None
) -> BurnInScheduleStatus:
    """``previous`` with what the owned runs say now. ``lastSuccessfulTime`` only moves forward:
    pruning the run that set it must not make the schedule forget it ever passed."""
    # Oldest first, so a run appended when it is created keeps its place on the next read.
    active = sorted(found.active, key=lambda r: (scheduled_at(r), r.name))
    update: dict[str, object] = {"active": [run_ref(r) for r in active] or None}
    newest = found.newest
    if newest is not None:
        update["last_run_name"] = newest.name
        update["last_run_phase"] = phase_of(newest)
    successes = [t for r in found.finished if phase_of(r) is Phase.PASSED if (t := _finished_at(r))]
    best = max(successes, default=None)
    known = previous.last_successful_time
    if known is not None and known.tzinfo is None:
        known = known.replace(tzinfo=UTC)  # a hand-written time without a zone is UTC
    if best is not None and (known is None or best > known):
        update["last_successful_time"] = best
    if generation is not None:
        update["observed_generation"] = generation
    return previous.model_copy(update=update)


def with_condition(
    status: BurnInScheduleStatus,
    *,
    kind: str,
    true: bool,
    reason: str,
    message: str,
    now: datetime,
    generation: int | None,
) -> BurnInScheduleStatus:
    """``status`` with condition ``kind`` set; its transition time moves only when its
    status flips."""
    text = "True" if true else "False"
    others = [c for c in status.conditions or () if c.type != kind]
    old = next((c for c in status.conditions or () if c.type == kind), None)
    since = old.last_transition_time if old is not None and old.status == text else now
    data: dict[str, object] = {
        "type": kind,
        "status": text,
        "lastTransitionTime": since,
        "reason": reason,
        "message": message[:CONDITION_MESSAGE_MAX],
    }
    if generation is not None:
        data["observedGeneration"] = generation
    condition = Condition.model_validate(data)
    return status.model_copy(update={"conditions": [*others, condition]})
