"""Results and attempts bookkeeping: open a unit's result, open its attempt, and record what an
attempt decided — through :func:`glimmer.verdict.complete_attempt`, the one decision point for
every scope (§2.11a). Nothing here judges; it copies the verdict layer's decision onto the
status, replacing results whole so the run that was read is never changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import cast

from glimmer.api.pinned import PlannedTest
from glimmer.api.result import ArtifactRef, NotEvaluated, TestAttempt, TestResult, Violation
from glimmer.api.threshold import to_contract
from glimmer.contract.vocab import TERMINAL_PHASES, Artifact, ParsedResult, Phase, RunnerVerdict
from glimmer.engine.backend import ArtifactStore, BackendError
from glimmer.engine.context import Pass
from glimmer.engine.copied import copied
from glimmer.engine.memory import RunMemory
from glimmer.engine.names import delivery_key
from glimmer.plan.env import is_segmented
from glimmer.verdict import UnitState, complete_attempt, next_trigger
from glimmer.verdict.artifact_refs import WRITE_FAILED, dropped_ref, merge_refs
from glimmer.verdict.attempts import truncate_history
from glimmer.verdict.fold import segments_required
from glimmer.verdict.settle import AttemptOutcome

NEVER_RAN_EXIT = -1

# One harvested execution's name and the artifacts its runner fenced on stdout.
Evidence = tuple[str, Sequence[Artifact]]


def new_result(test: PlannedTest, nodes: list[str], started_at: datetime | None) -> TestResult:
    """A freshly opened result, with its repeat and soak bookkeeping pinned from the plan."""
    spec = test.spec
    segmented = is_segmented(spec)
    segment = spec.soak.segment_seconds if spec.soak is not None and segmented else 0
    return TestResult(
        name=test.name,
        kind=spec.kind,
        scope=spec.scope,
        phase=Phase.RUNNING,
        nodes=list(nodes),
        started_at=started_at,
        variant_axes=dict(test.axes) if test.axes else None,
        repeats_required=spec.repeat_count,
        segments_required=segments_required(spec.duration_seconds, segment) if segmented else 0,
        segment_seconds=segment,
        attempts=[],
    )


def fresh_result(
    memory: RunMemory, test: PlannedTest, nodes: list[str], started_at: datetime | None
) -> TestResult:
    """:func:`new_result`, copied from the one validated for ``test`` (the same values, and
    the same names given, so the same dumps)."""
    kept = memory.opened.get(test.name)
    if kept is None or kept[0] is not test:
        kept = memory.opened[test.name] = (test, new_result(test, [], None))
    axes = kept[1].variant_axes
    return copied(
        kept[1],
        {
            "nodes": list(nodes),
            "started_at": started_at,
            "variant_axes": dict(axes) if axes else axes,
            "attempts": [],
        },
    )


def fresh_attempt(
    memory: RunMemory,
    attempt: int,
    trigger: str,
    node: str,
    pod_name: str | None,
    started_at: datetime | None,
) -> TestAttempt:
    """An open attempt as ``TestAttempt(attempt=..., trigger=..., node=..., pod_name=...,
    phase=Running, started_at=...)`` makes it, copied from one validated once per run."""
    template = memory.attempt
    if template is None:
        template = memory.attempt = TestAttempt(
            attempt=1,
            trigger="Initial",
            node="",
            pod_name=None,
            phase=Phase.RUNNING,
            started_at=None,
        )
    return copied(
        template,
        {
            "attempt": attempt,
            "trigger": trigger,
            "node": node,
            "pod_name": pod_name,
            "started_at": started_at,
        },
    )


def open_attempt_of(result: TestResult | None) -> TestAttempt | None:
    """The last attempt while it is still open."""
    if result is None or not result.attempts:
        return None
    last = result.attempts[-1]
    return None if last.phase in TERMINAL_PHASES else last


def attempt_number(result: TestResult | None) -> int:
    """1 with no attempts; the last one's number while it is open; else the next."""
    if result is None or not result.attempts:
        return 1
    last = result.attempts[-1]
    return last.attempt if last.phase not in TERMINAL_PHASES else last.attempt + 1


def observe(
    ctx: Pass,
    test: PlannedTest,
    nodes: list[str],
    attempt: int,
    pod_name: str,
    started_at: datetime | None,
    *,
    put: bool = True,
) -> TestResult:
    """Make sure the result and this attempt are open; set startedAt from the first attempt
    that actually started (never from creation). Writes only when something changed; with
    ``put`` False not even then (:func:`complete` puts only what the attempt decided)."""
    existing = ctx.book.get(test.name, nodes[0])
    if existing is not None and existing.attempts:
        last = existing.attempts[-1]
        if (
            last.attempt == attempt
            and (last.started_at is not None or started_at is None)
            and (not pod_name or last.pod_name == pod_name)
            and (existing.started_at is not None or started_at is None)
        ):
            return existing  # already open as it should be: the common pass changes nothing
    result = existing if existing is not None else fresh_result(ctx.memory, test, nodes, started_at)
    changed = existing is None
    if result.started_at is None and started_at is not None:
        result = copied(result, {"started_at": started_at})
        changed = True
    attempts = list(result.attempts or ())
    current = attempts[-1] if attempts else None
    if current is None or current.attempt != attempt:
        previous = current.phase if current is not None else None
        trigger = next_trigger(previous, segmented=result.segments_required > 0)
        attempts.append(
            fresh_attempt(
                ctx.memory, attempt, trigger.value, nodes[0], pod_name or None, started_at
            )
        )
        changed = True
    else:
        fix: dict[str, object] = {}
        if current.started_at is None and started_at is not None:
            fix["started_at"] = started_at
        if pod_name and current.pod_name != pod_name:
            fix["pod_name"] = pod_name  # a Pair's client (the deciding side) takes over
        if fix:
            attempts[-1] = copied(current, fix)
            changed = True
    if not changed:
        return result
    opened = copied(result, {"attempts": attempts})
    return ctx.book.put(opened) if put else opened


def _state(result: TestResult) -> UnitState:
    return UnitState(
        repeats_required=result.repeats_required or 1,
        repeats_completed=result.repeats_completed,
        error_retries=result.error_retries,
        segments_required=result.segments_required,
        segments_completed=result.segments_completed,
        segment_seconds=result.segment_seconds,
        aggregated_metrics=dict(result.aggregated_metrics or {}),
        unmeasurable=frozenset(result.unmeasurable or ()),
    )


def _violations(outcome: AttemptOutcome) -> list[Violation]:
    return [
        Violation(index=v.index, metric=v.metric, cause=v.cause, kind=v.kind, reason=v.reason)
        for v in outcome.violations
    ]


def _not_evaluated(outcome: AttemptOutcome) -> list[NotEvaluated]:
    return [NotEvaluated(metric=n.metric, reason=n.reason) for n in outcome.not_evaluated]


class _Shared:
    """One dict per distinct set of metrics in a result: an attempt's metrics, the result's and
    its aggregate are most often the same readings, and each copy cost a dict of tens of entries
    per result (a 16,384-node run kept 82k results). Safe because results are never changed in
    place (:mod:`.book`)."""

    def __init__(self) -> None:
        self.kept: list[dict[str, str]] = []

    def __call__(self, metrics: Mapping[str, str] | None) -> dict[str, str] | None:
        if not metrics:
            return None
        for kept in self.kept:
            if kept == metrics:
                return kept
        copied = dict(metrics)
        self.kept.append(copied)
        return copied


def _store(ctx: Pass, test: str, evidence: Sequence[Evidence]) -> list[ArtifactRef]:
    """Hand each execution's artifacts to the backend's store (:class:`ArtifactStore`), if it
    has one; the refs it returns. A store that fails outright loses the evidence, never the
    pass: every artifact it was given becomes a dropped ref."""
    if getattr(ctx.backend, "store_artifacts", None) is None:
        return []
    store = cast(ArtifactStore, ctx.backend)
    refs: list[ArtifactRef] = []
    for pod_name, artifacts in evidence:
        if not artifacts:
            continue
        try:
            refs += store.store_artifacts(ctx.run, test, pod_name, artifacts)
        except BackendError as e:
            refs += [dropped_ref(a, f"{WRITE_FAILED}: {e}") for a in artifacts]
    return refs


def complete(
    ctx: Pass,
    test: PlannedTest,
    nodes: list[str],
    attempt: int,
    pod_name: str,
    parsed: ParsedResult,
    started_at: datetime | None = None,
    ended_at: datetime | None = None,
    evidence: Sequence[Evidence] = (),
) -> TestResult:
    """Record a finished attempt and let the verdict layer decide the unit's next step.

    ``ended_at`` is when the execution itself ended, as the substrate reports it: finishedAt is
    that instant, not when a pass happened to notice (after a resume that was minutes later).
    An attempt the machinery decided (overdue, lost, unbuildable) ends when it was decided.

    ``evidence`` is what the harvested executions fenced (none for an attempt the machinery
    decided): stored here, after the decision and before the status write that precedes any
    delete, and its refs added to the result's (a re-harvest adds none twice)."""
    finished_at = ended_at or ctx.now
    # Opened as observe opens it, and put in the book once, as the attempt decided (putting
    # the opened result first, to replace it at once, was two puts and two copies a unit).
    result = observe(ctx, test, nodes, attempt, pod_name, started_at, put=False)
    spec = test.spec
    step = complete_attempt(
        _state(result),
        parsed,
        to_contract(spec.thresholds),
        attempt_number=attempt,
        retry_limit=ctx.retry_limit,
        abort_early=bool(spec.soak and spec.soak.abort_early),
    )
    shared = _Shared()
    attempts = list(result.attempts or ())
    attempts[-1] = copied(
        attempts[-1],
        {
            "phase": step.attempt.phase,
            "exit_code": parsed.exit_code,
            "finished_at": finished_at,
            "metrics": shared(step.attempt.metrics),
            "message": step.attempt.message,
            "pod_name": pod_name or attempts[-1].pod_name,
        },
    )
    truncated = result.truncated_attempts
    if result.segments_required > 0:
        attempts, dropped = truncate_history(attempts, lambda a: a.phase)
        truncated += dropped
    state = step.state
    update: dict[str, object] = {
        "attempts": attempts,
        "truncated_attempts": truncated,
        "repeats_completed": state.repeats_completed,
        "error_retries": state.error_retries,
        "segments_completed": state.segments_completed,
        "aggregated_metrics": shared(state.aggregated_metrics),
        "message": step.message,
        "finished_at": finished_at,
    }
    if parsed.metrics:
        update["metrics"] = shared(parsed.metrics)
    if state.segmented and state.aggregated_metrics:
        update["metrics"] = shared(state.aggregated_metrics)
        update["unmeasurable"] = sorted(state.unmeasurable) or None
    stored = _store(ctx, test.name, evidence)
    if stored:
        update["artifacts"] = merge_refs(result.artifacts, stored)
    final = step.settled
    if final is not None:
        update.update(
            phase=final.phase,
            metrics=shared(final.metrics),
            violations=_violations(final) or None,
            not_evaluated=_not_evaluated(final) or None,
            unmeasurable=list(final.unmeasurable) or None,
        )
    result = ctx.book.put(copied(result, update))
    if final is not None:
        ctx.deliveries.append(
            ctx.delivery(
                "TestCompleted", delivery_key(test.name, nodes), final.phase.value, result=result
            )
        )
    return result


def machinery_error(message: str) -> ParsedResult:
    """A parsed result for an attempt the machinery lost (never scheduled, overdue, deleted,
    unbuildable): an Error with no runner exit, judged like any other Error (retried)."""
    return ParsedResult(verdict=RunnerVerdict.ERROR, exit_code=NEVER_RAN_EXIT, message=message)


def close_unit(
    ctx: Pass, test: PlannedTest, nodes: list[str], phase: Phase, message: str
) -> TestResult:
    """Settle a unit from outside the verdict (cancel, deadline, terminal): the result and its
    open attempt take ``phase`` with ``message``; a never-started unit gets a result too."""
    result = ctx.book.get(test.name, nodes[0]) or new_result(test, nodes, None)
    attempts = list(result.attempts or ())
    if attempts and attempts[-1].phase not in TERMINAL_PHASES:
        attempts[-1] = copied(
            attempts[-1], {"phase": phase, "finished_at": ctx.now, "message": message}
        )
    result = ctx.book.put(
        copied(
            result,
            {
                "phase": phase,
                "message": message,
                "finished_at": ctx.now,
                "attempts": attempts or None,
            },
        )
    )
    return result
