"""Mid-flight checkpoints (§2.12a): publish in-flight readings without judging them.

A checkpoint reads the log so far and parses it as if it had exited 0, but no exit code is
consulted, no gate applied and no phase changed. On a segmented soak it publishes the fold of
the aggregate with the window so far and never touches the aggregate itself (a checkpoint once
overwrote a soak's fold with one window).
"""

from __future__ import annotations

from glimmer.api.pinned import PlannedTest
from glimmer.api.result import TestResult
from glimmer.contract.parse import parse
from glimmer.engine.backend import Execution, LogUnavailable
from glimmer.engine.context import Pass
from glimmer.verdict import fold_metrics


def checkpoint_interval(test: PlannedTest) -> int:
    return test.spec.checkpoint_interval_seconds or 0


def plan_interval(tests: list[PlannedTest]) -> int:
    """The shortest positive checkpoint interval of the plan (0: none)."""
    positive = [checkpoint_interval(t) for t in tests if checkpoint_interval(t) > 0]
    return min(positive) if positive else 0


def maybe_checkpoint(
    ctx: Pass, test: PlannedTest, result: TestResult, execution: Execution
) -> None:
    """Refresh ``result``'s metrics from ``execution``'s log when a checkpoint is due."""
    interval = checkpoint_interval(test)
    if interval <= 0:
        return
    last = result.last_checkpoint_at or result.started_at
    if last is None or (ctx.now - last).total_seconds() < interval:
        return
    try:
        log = ctx.backend.read_log(execution.spec.namespace, execution.name)
    except LogUnavailable:
        return  # try again next pass
    window = parse(test.spec.kind, log, 0).metrics
    if not window:
        return
    shown = (
        fold_metrics(result.aggregated_metrics or {}, window)
        if result.segments_required > 0
        else dict(window)
    )
    attempts = list(result.attempts or ())
    if attempts:
        attempts[-1] = attempts[-1].model_copy(
            update={"metrics": dict(window), "last_checkpoint_at": ctx.now}
        )
    ctx.book.put(
        result.model_copy(
            update={"metrics": shown, "last_checkpoint_at": ctx.now, "attempts": attempts}
        )
    )
    ctx.checkpoint_due = True
