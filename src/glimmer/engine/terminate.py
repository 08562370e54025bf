"""The way out (§2.14, §2.15): write the verdict, stop the load, release the cordons, deliver,
and drop the finalizer — in that order, on every route. A terminal phase is never changed."""

from __future__ import annotations

from datetime import timedelta

from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.engine.book import is_terminal
from glimmer.engine.context import Pass
from glimmer.engine.cordon import release_all
from glimmer.engine.keys import FINALIZER, PENDING_DELIVERY_ANNOTATION, TERMINAL_DELIVERY_RETRY
from glimmer.engine.persist import persist
from glimmer.engine.wake import Outcome

UNFINISHED = "the run reached a terminal phase before this execution completed — no verdict"


def _stop_load(ctx: Pass) -> None:
    for execution in ctx.backend.executions(ctx.namespace, ctx.run.name, ctx.uid).live():
        ctx.backend.delete_execution(ctx.namespace, execution.name)


def _drop_finalizer(ctx: Pass, annotations: dict[str, str | None] | None = None) -> None:
    finalizers = [f for f in ctx.run.metadata.finalizers or () if f != FINALIZER]
    if annotations or FINALIZER in (ctx.run.metadata.finalizers or ()):
        ctx.run = ctx.backend.write_metadata(
            ctx.run, annotations=annotations, finalizers=finalizers
        )


def terminate(ctx: Pass, phase: Phase) -> Outcome:
    """Settle the run in ``phase``."""
    for result in ctx.book.open_results():
        if not is_terminal(result):
            attempts = list(result.attempts or ())
            if attempts and attempts[-1].phase not in TERMINAL_PHASES:
                attempts[-1] = attempts[-1].model_copy(
                    update={"phase": Phase.ERROR, "finished_at": ctx.now, "message": UNFINISHED}
                )
            ctx.book.put(
                result.model_copy(
                    update={
                        "phase": Phase.ERROR,
                        "finished_at": ctx.now,
                        "message": UNFINISHED,
                        "attempts": attempts or None,
                    }
                )
            )
    persist(ctx, force=True, phase=phase, finished_at=ctx.now)  # the verdict is durable first
    _stop_load(ctx)
    had = bool(ctx.cordoned) or bool(ctx.run.status and ctx.run.status.cordoned_nodes)
    release_all(ctx)
    if had:
        persist(ctx)
    delivered = ctx.backend.deliver(ctx.delivery("RunPhaseChanged", phase.value, phase.value))
    pending: dict[str, str | None] | None = (
        None if delivered else {PENDING_DELIVERY_ANNOTATION: phase.value}
    )
    _drop_finalizer(ctx, pending)
    return _after_terminal(ctx)


def _after_terminal(ctx: Pass) -> Outcome:
    annotations = ctx.run.metadata.annotations or {}
    if PENDING_DELIVERY_ANNOTATION in annotations:
        return Outcome(TERMINAL_DELIVERY_RETRY)
    ttl = ctx.run.spec.ttl_seconds_after_finished or 0
    finished = ctx.run.status.finished_at if ctx.run.status else None
    if ttl > 0 and finished is not None:
        due = finished + timedelta(seconds=ttl)
        if ctx.now >= due:
            ctx.backend.delete_run(ctx.namespace, ctx.run.name)
            return Outcome(None)
        return Outcome((due - ctx.now).total_seconds())
    return Outcome(None)


def terminal_path(ctx: Pass) -> Outcome:
    """Each pass over a terminal run: finish a teardown a crash interrupted, re-send an
    undelivered verdict, then wait for the TTL."""
    if FINALIZER in (ctx.run.metadata.finalizers or ()):
        # A teardown a crash interrupted: finish it, and announce the verdict again (the
        # envelope may never have gone out; the sinks deduplicate on its key).
        _stop_load(ctx)
        release_all(ctx)
        persist(ctx)
        final = ctx.run.status.phase.value if ctx.run.status else "Error"
        delivered = ctx.backend.deliver(ctx.delivery("RunPhaseChanged", final, final))
        pending: dict[str, str | None] | None = (
            None if delivered else {PENDING_DELIVERY_ANNOTATION: final}
        )
        _drop_finalizer(ctx, pending)
    annotations = ctx.run.metadata.annotations or {}
    phase = annotations.get(PENDING_DELIVERY_ANNOTATION)
    if phase is not None and ctx.backend.deliver(ctx.delivery("RunPhaseChanged", phase, phase)):
        ctx.run = ctx.backend.write_metadata(
            ctx.run, annotations={PENDING_DELIVERY_ANNOTATION: None}
        )
    return _after_terminal(ctx)


def deleted_path(ctx: Pass) -> Outcome:
    """A run being deleted: stop its load and release its nodes before letting it go."""
    if FINALIZER in (ctx.run.metadata.finalizers or ()):
        _stop_load(ctx)
        release_all(ctx)
        _drop_finalizer(ctx)
    return Outcome(None)
