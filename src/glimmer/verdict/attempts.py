"""Completing an attempt: the one place that decides retry, repeat, segment or settle (§2.11a).

Error is not Fail, and only Error is retried: a Failed attempt settles the unit at once (no
retry, no further repeat, a failing soak segment ends the soak), a Skipped one settles it, and
an Error is retried while the error budget lasts without consuming a repeat or a segment.
Repeats are an AND: the unit passes only when every repeat passed.

The state is a small frozen value the engine copies from and back onto its result; the
function is pure, so every scope and every substrate settles the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from glimmer.contract.vocab import ParsedResult, Phase, Threshold
from glimmer.verdict.evaluate import violation_summary
from glimmer.verdict.fold import fold_metrics, fold_unmeasurable, provable_violations
from glimmer.verdict.settle import AttemptOutcome, attempt_outcome, gate_outcome
from glimmer.verdict.text import plural

T = TypeVar("T")

HISTORY_CAP = 17  # attempts a segmented result keeps before truncating
KEPT_PASSED = 16  # the most recent Passed attempts kept


class Trigger(StrEnum):
    """Why an attempt was launched."""

    INITIAL = "Initial"
    REPEAT = "Repeat"
    ERROR_RETRY = "ErrorRetry"
    SEGMENT = "Segment"


def next_trigger(previous_phase: Phase | None, *, segmented: bool) -> Trigger:
    """The trigger of the next attempt, given the phase of the one before (None: first)."""
    if previous_phase is None:
        return Trigger.INITIAL
    if previous_phase is Phase.ERROR:
        return Trigger.ERROR_RETRY
    return Trigger.SEGMENT if segmented else Trigger.REPEAT


@dataclass(frozen=True)
class UnitState:
    """Repeat, retry and soak bookkeeping of one execution unit.

    ``segments_required`` of 0 means the unit is not a segmented soak.
    """

    repeats_required: int = 1
    repeats_completed: int = 0
    error_retries: int = 0
    segments_required: int = 0
    segments_completed: int = 0
    segment_seconds: int = 0
    aggregated_metrics: Mapping[str, str] = field(default_factory=dict)
    unmeasurable: frozenset[str] = frozenset()

    @property
    def segmented(self) -> bool:
        return self.segments_required > 0


@dataclass(frozen=True)
class Step:
    """What completing one attempt decided.

    ``attempt`` is the attempt's own outcome (its phase, message and window metrics).
    ``settled`` is the unit's final verdict, or None while the unit stays open; ``message`` is
    the result's message either way.
    """

    state: UnitState
    attempt: AttemptOutcome
    message: str
    settled: AttemptOutcome | None = None

    @property
    def done(self) -> bool:
        return self.settled is not None


def _settle(state: UnitState, attempt: AttemptOutcome, final: AttemptOutcome) -> Step:
    return Step(state=state, attempt=attempt, message=final.message, settled=final)


def _soak_verdict(state: UnitState, thresholds: Sequence[Threshold]) -> AttemptOutcome:
    judged = gate_outcome(state.aggregated_metrics, state.unmeasurable, thresholds)
    k = state.segments_completed
    prefix = f"{k} {plural(k, 'segment')} of {state.segment_seconds}s completed"
    message = f"{prefix}; {judged.message}" if judged.message else prefix
    return dataclasses.replace(judged, message=message)


def _abort_early(state: UnitState, thresholds: Sequence[Threshold]) -> AttemptOutcome | None:
    proven = provable_violations(state.aggregated_metrics, state.unmeasurable, thresholds)
    if not proven:
        return None
    k, n = state.segments_completed, state.segments_required
    remaining = n - k
    message = (
        f"soak aborted after segment {k} of {n}: {proven[0].reason}. The aggregate already "
        "violates a gate no later segment could retract, so the remaining "
        f"{remaining} {plural(remaining, 'segment')} were not burned"
    )
    summary = violation_summary(proven)
    if summary:
        message += f" [{summary}]"
    return AttemptOutcome(
        phase=Phase.FAILED,
        message=message,
        metrics=dict(state.aggregated_metrics),
        violations=proven,
        unmeasurable=tuple(sorted(state.unmeasurable)),
    )


def _passed_segment(
    state: UnitState,
    attempt: AttemptOutcome,
    parsed: ParsedResult,
    thresholds: Sequence[Threshold],
    abort_early: bool,
) -> Step:
    aggregate = fold_metrics(state.aggregated_metrics, attempt.metrics)
    state = dataclasses.replace(
        state,
        segments_completed=state.segments_completed + 1,
        aggregated_metrics=aggregate,
        unmeasurable=fold_unmeasurable(state.unmeasurable, parsed.unmeasurable, aggregate),
    )
    if state.segments_completed >= state.segments_required:
        final = _soak_verdict(state, thresholds)
        if final.phase is Phase.PASSED:
            state = dataclasses.replace(state, repeats_completed=state.repeats_required)
        return _settle(state, attempt, final)
    if abort_early:
        aborted = _abort_early(state, thresholds)
        if aborted is not None:
            return _settle(state, attempt, aborted)
    message = f"segment {state.segments_completed}/{state.segments_required} complete"
    return Step(state=state, attempt=attempt, message=message)


def complete_attempt(
    state: UnitState,
    parsed: ParsedResult,
    thresholds: Sequence[Threshold],
    *,
    attempt_number: int,
    retry_limit: int,
    abort_early: bool = False,
) -> Step:
    """Decide what one finished attempt means for its unit.

    ``parsed`` is the harvested (and, for Pair/Group, combined) result after
    :func:`~glimmer.verdict.settle.harvest` and the log-fetch rule. ``retry_limit`` is the
    run's live ``retryOnErrorLimit``; ``abort_early`` the soak's ``abortEarly``.
    """
    attempt = attempt_outcome(parsed, thresholds, segmented=state.segmented)
    phase = attempt.phase
    if phase is Phase.PASSED:
        if state.segmented:
            return _passed_segment(state, attempt, parsed, thresholds, abort_early)
        state = dataclasses.replace(state, repeats_completed=state.repeats_completed + 1)
        if state.repeats_completed >= state.repeats_required:
            return _settle(state, attempt, attempt)
        message = f"attempt {state.repeats_completed}/{state.repeats_required} passed"
        return Step(state=state, attempt=attempt, message=message)
    if phase is Phase.ERROR and state.error_retries < retry_limit:
        state = dataclasses.replace(state, error_retries=state.error_retries + 1)
        message = f"attempt {attempt_number} errored ({attempt.message}); retrying"
        return Step(state=state, attempt=attempt, message=message)
    if phase is Phase.ERROR and state.segmented and state.aggregated_metrics:
        # The budget is spent, but earlier windows measured something: keep that evidence.
        final = dataclasses.replace(
            attempt,
            metrics=dict(state.aggregated_metrics),
            unmeasurable=tuple(sorted(state.unmeasurable)),
        )
        return _settle(state, attempt, final)
    # Failed (never retried), Skipped, or an Error with no budget left.
    return _settle(state, attempt, attempt)


def truncate_history(attempts: Sequence[T], phase_of: Callable[[T], Phase]) -> tuple[list[T], int]:
    """Cap a segmented result's attempt list (§2.12b); returns (kept, number dropped).

    Above 17 attempts: the first attempt, every attempt that did not pass, and the last 16
    Passed attempts are kept, in order. The verdict never reads this list, so dropping the
    middle of a week-long soak's clean segments loses no evidence the result depends on.
    """
    if len(attempts) <= HISTORY_CAP:
        return list(attempts), 0
    passed = [i for i, a in enumerate(attempts) if phase_of(a) is Phase.PASSED]
    keep = {0, len(attempts) - 1, *passed[-KEPT_PASSED:]}
    keep |= {i for i, a in enumerate(attempts) if phase_of(a) is not Phase.PASSED}
    kept = [a for i, a in enumerate(attempts) if i in keep]
    return kept, len(attempts) - len(kept)
