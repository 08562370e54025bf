"""The Node-scope unit (§2.7): one execution at a time on one node, attempt after attempt
until the verdict layer settles the result."""

from __future__ import annotations

from datetime import timedelta

from glimmer.api.pinned import PlannedTest
from glimmer.api.result import TestResult
from glimmer.api.threshold import to_contract
from glimmer.engine.backend import Execution
from glimmer.engine.book import is_terminal
from glimmer.engine.checkpoint import maybe_checkpoint
from glimmer.engine.context import Pass
from glimmer.engine.cordon import cordon_node
from glimmer.engine.harvest import harvest_execution, waiting_detail
from glimmer.engine.memory import Quiet
from glimmer.engine.podspec import Placement
from glimmer.engine.results import attempt_number, complete, observe
from glimmer.engine.unit import (
    lost_execution,
    overdue,
    record_lost,
    record_machinery_error,
    window_seconds,
)
from glimmer.plan.images import ImageError
from glimmer.plan.slots import may_start
from glimmer.verdict import apply_log_fetch_rule


def overdue_message(phase: str) -> str:
    return (
        f'pod never completed within its window (last phase "{phase}") — unschedulable target '
        "or stuck image pull; no verdict"
    )


def _observed(result: TestResult, attempt: int, name: str) -> bool:
    """The result already shows this attempt running on this execution (the usual pass)."""
    attempts = result.attempts
    if not attempts or result.started_at is None:
        return False
    last = attempts[-1]
    return last.attempt == attempt and last.pod_name == name and last.started_at is not None


def _remember_quiet(
    ctx: Pass, test: PlannedTest, node: str, result: TestResult | None, execution: Execution
) -> None:
    """Note that visiting this unit changed nothing, and until when that stays true with the
    same result and execution: its overdue instant or its next checkpoint, whichever is first.
    The note is the engine's (kept with the run's memory) and holds only while the result and
    the execution read the same, so a fresh engine, or one given fresh copies, simply visits."""
    until = execution.created_at + timedelta(seconds=window_seconds(test))
    interval = test.spec.checkpoint_interval_seconds or 0
    if interval > 0 and result is not None:
        last = result.last_checkpoint_at or result.started_at
        if last is not None:
            until = min(until, last + timedelta(seconds=interval))
    ctx.memory.quiet[(test.name, node)] = Quiet(result, execution, until)


def _same(a: object, b: object) -> bool:
    # Identity first: on a substrate that hands back the objects it stored this is the answer;
    # one that deserialises every read hands back equal copies.
    return a is b or a == b


def _still_quiet(ctx: Pass, test: PlannedTest, node: str, result: TestResult | None) -> bool:
    """Whether the unit's quiet note still holds; if so it is put to sleep (:mod:`.sleep`):
    found quiet twice running, no pass visits it again until something happens to it."""
    quiet = ctx.memory.quiet
    note = quiet.get((test.name, node))
    if note is None:
        return False
    seen = ctx.executions.get(note.execution.name)
    if ctx.now >= note.until or not _same(note.result, result) or not _same(note.execution, seen):
        del quiet[(test.name, node)]  # it no longer holds: visit, and keep no stale note
        return False
    ctx.in_flight(test, waiting=not note.execution.started)
    if ctx.reused:
        # The status is the one this engine wrote: nothing but the engine changes a result,
        # and it wakes the unit when it does.
        ctx.memory.sleepers.sleep((test.name, node), note.execution, note.until)
    return True


def advance_node(ctx: Pass, index: int, test: PlannedTest, node: str) -> bool:
    """Advance the unit of ``test`` on ``node``; True when it had anything in flight, waiting
    or harvested this pass."""
    result = ctx.book.get(test.name, node)
    if result is not None and is_terminal(result):
        return False
    if _still_quiet(ctx, test, node, result):
        return True
    if result is None and node not in ctx.busy and (not ctx.launch or len(ctx.busy) >= ctx.cap):
        # Nothing started here and nothing may start: waiting for a slot (or for resume).
        ctx.pending = True
        return True
    attempt = attempt_number(result)
    name = ctx.execution_name(index, node, attempt)
    execution = ctx.executions.get(name)
    nodes = [node]
    if execution is None:
        lost = lost_execution(result, attempt, (name,), ctx.executions)
        if lost is not None:
            record_lost(ctx, test, nodes, attempt, lost)
            return True
        if not ctx.launch or not may_start(ctx.busy, nodes, ctx.cap):
            ctx.pending = True
            return True
        try:
            spec = ctx.execution(test, index, attempt, Placement(node, (node,)))
        except ImageError as e:
            record_machinery_error(ctx, test, nodes, attempt, name, e.message)
            return True
        cordon_node(ctx, node, test)
        ctx.create(spec)
        ctx.occupy((node,))
        ctx.in_flight(test, waiting=True)
        return True
    if execution.live:
        if overdue(ctx, test, execution):
            message = overdue_message(execution.phase.value) + waiting_detail(execution)
            record_machinery_error(ctx, test, nodes, attempt, name, message, execution)
            ctx.condemn(execution)
        elif not execution.started:
            ctx.in_flight(test, waiting=True)
            _remember_quiet(ctx, test, node, result, execution)
        else:
            before = result
            if result is None or not _observed(result, attempt, name):
                result = observe(ctx, test, nodes, attempt, name, execution.started_at or ctx.now)
            if test.spec.checkpoint_interval_seconds:
                maybe_checkpoint(ctx, test, result, execution)
            ctx.in_flight(test)
            if ctx.book.get(test.name, node) is before:
                _remember_quiet(ctx, test, node, before, execution)
        return True
    harvest = harvest_execution(ctx.backend, execution)
    parsed = apply_log_fetch_rule(
        harvest.parsed, to_contract(test.spec.thresholds), harvest.log_error
    )
    evidence = [(name, harvest.parsed.artifacts)]
    complete(
        ctx,
        test,
        nodes,
        attempt,
        name,
        parsed,
        execution.started_at,
        execution.finished_at,
        evidence,
    )
    ctx.harvested += 1
    ctx.free((test.name, node), nodes, name)
    return True
