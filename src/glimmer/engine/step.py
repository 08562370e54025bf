"""One step of a running run (§2.6, §2.13): cancel dominates, then the deadline, then the
execution pass (launching unless suspended), then what the pass found decides the outcome."""

from __future__ import annotations

from glimmer.api.run import CancelPolicy
from glimmer.contract.vocab import Phase
from glimmer.engine.checkpoint import plan_interval
from glimmer.engine.context import Pass
from glimmer.engine.execute import execute
from glimmer.engine.keys import CANCELLING_ANNOTATION
from glimmer.engine.persist import deliver_checkpoint, kill_condemned, persist
from glimmer.engine.stop import (
    cancel_reason,
    cancelling,
    deadline_expired,
    deadline_message,
    settle_unfinished,
)
from glimmer.engine.terminate import terminate
from glimmer.engine.wake import Outcome, next_wake
from glimmer.verdict import ResultView, run_phase


def _after_write(ctx: Pass) -> None:
    kill_condemned(ctx)
    deliver_checkpoint(ctx, plan_interval(ctx.plan.tests))


def _cancel(ctx: Pass) -> Outcome:
    reason = cancel_reason(ctx)
    if CANCELLING_ANNOTATION not in (ctx.run.metadata.annotations or {}):
        # The durable, one-way mark: once observed, clearing spec.cancel never resumes.
        ctx.run = ctx.backend.write_metadata(ctx.run, annotations={CANCELLING_ANNOTATION: reason})
    ctx.launch = False
    execute(ctx)
    if ctx.run.spec.cancel_policy is CancelPolicy.GRACEFUL and ctx.running:
        persist(ctx)
        _after_write(ctx)
        return Outcome(next_wake(ctx))
    settle_unfinished(ctx, Phase.CANCELLED, f"run cancelled: {reason}")
    return terminate(ctx, Phase.CANCELLED)


def _finalize(ctx: Pass) -> Outcome:
    views = [
        ResultView(kind=r.kind, phase=r.phase, required=ctx.required(r.name) if r.kind else True)
        for r in ctx.book.current()
    ]
    return terminate(ctx, run_phase(views))


def step(ctx: Pass) -> Outcome:
    if cancelling(ctx):
        return _cancel(ctx)
    if deadline_expired(ctx):
        ctx.launch = False
        execute(ctx)  # what already ended keeps its real verdict
        settle_unfinished(ctx, Phase.ERROR, deadline_message(ctx))
        return terminate(ctx, Phase.ERROR)
    ctx.launch = not ctx.run.spec.suspend
    execute(ctx)
    if ctx.harvested:
        # A pass that handed on the slot of everything it harvested needs no second pass at
        # this instant, unless it killed something or left nothing in flight or waiting (the
        # run may be done): that pass does what this one could not (:meth:`Pass.free`).
        again = (
            ctx.harvested > ctx.handed_on or bool(ctx.condemned) or not (ctx.running or ctx.pending)
        )
        persist(ctx)
        _after_write(ctx)
        return Outcome(0.0 if again else next_wake(ctx))
    if ctx.running:
        persist(ctx)
        _after_write(ctx)
        return Outcome(next_wake(ctx))
    if ctx.run.spec.suspend:
        persist(ctx)
        _after_write(ctx)
        return Outcome(None)  # everything reported: wait, non-terminal, cordons held
    if ctx.pending:
        persist(ctx)
        _after_write(ctx)
        return Outcome(next_wake(ctx))
    return _finalize(ctx)
