"""Stop controls (§2.13): cancel (one-way, dominates suspend) and the run deadline settle every
planned unit that has no verdict yet — created if it never started — so the record names what
was not judged. Completed results keep their real verdicts."""

from __future__ import annotations

from glimmer.contract.vocab import Phase
from glimmer.engine.book import is_terminal
from glimmer.engine.context import Pass
from glimmer.engine.keys import CANCELLING_ANNOTATION, NO_CANCEL_REASON
from glimmer.engine.results import close_unit


def settle_unfinished(ctx: Pass, phase: Phase, message: str) -> None:
    """Close every unit of the plan (:mod:`glimmer.plan.units`) that has no verdict yet."""
    for unit in ctx.units:
        result = ctx.book.get(*unit.key)
        if result is None or not is_terminal(result):
            close_unit(ctx, unit.test, list(unit.nodes), phase, message)


def cancel_reason(ctx: Pass) -> str:
    """The reason recorded when the cancel was first observed, else the spec's."""
    annotations = ctx.run.metadata.annotations or {}
    if CANCELLING_ANNOTATION in annotations:
        return annotations[CANCELLING_ANNOTATION]
    return ctx.run.spec.cancel_reason or NO_CANCEL_REASON


def cancelling(ctx: Pass) -> bool:
    annotations = ctx.run.metadata.annotations or {}
    return ctx.run.spec.cancel or CANCELLING_ANNOTATION in annotations


def deadline_expired(ctx: Pass) -> bool:
    deadline = ctx.run.spec.deadline_seconds or 0
    started = ctx.run.status.started_at if ctx.run.status else None
    if deadline <= 0 or started is None:
        return False
    return (ctx.now - started).total_seconds() > deadline


def deadline_message(ctx: Pass) -> str:
    return (
        f"run deadline of {ctx.run.spec.deadline_seconds}s expired before this execution "
        "completed — the hardware was not judged"
    )
