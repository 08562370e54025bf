"""Writing the checkpoint: deliveries owed go out first (a crash redelivers under the same key),
then the status; condemned executions die only after that write (kill-after-record), and the
checkpoint envelope follows it."""

from __future__ import annotations

from glimmer.api.run import BurnInRun
from glimmer.engine.context import Pass


def flush_deliveries(ctx: Pass) -> None:
    for delivery in ctx.deliveries:
        ctx.backend.deliver(delivery)
    ctx.deliveries.clear()


def persist(ctx: Pass, force: bool = False, **changes: object) -> BurnInRun:
    """Write the status if anything changed (or ``force``); returns the run as stored."""
    flush_deliveries(ctx)
    stored = ctx.run.status
    listed = (stored.cordoned_nodes or None) if stored else None
    cordoned = ctx.cordoned.listed(listed)  # sorted, change by change (:mod:`.cordoned`)
    unchanged_cordons = cordoned is listed or cordoned == listed
    if not (force or ctx.book.dirty or changes or not unchanged_cordons):
        return ctx.run
    status = ctx.book.status(cordoned_nodes=cordoned, **changes)
    try:
        ctx.run = ctx.backend.write_status(ctx.run, status)
    except BaseException:
        ctx.book.rollback()  # the stored list is the last status written, whatever happened
        raise
    ctx.book.written()
    ctx.cordoned.written()
    ctx.memory.wrote(ctx.run, ctx.book.index, ctx.cordoned)  # reused when read back as written
    return ctx.run


def kill_condemned(ctx: Pass) -> None:
    """Delete what the pass condemned; only ever called after the status write."""
    for name in sorted(ctx.condemned):
        ctx.backend.delete_execution(ctx.namespace, name)
    ctx.memory.watch.touch(ctx.condemned.keys())  # re-read next pass: gone, or going
    ctx.condemned.clear()


def deliver_checkpoint(ctx: Pass, interval: int) -> None:
    """The Checkpoint envelope, sequence = floor(elapsed / the plan's shortest interval)."""
    if not ctx.checkpoint_due or interval <= 0:
        return
    started = ctx.run.status.started_at if ctx.run.status else None
    elapsed = (ctx.now - started).total_seconds() if started else 0.0
    sequence = int(elapsed // interval)
    ctx.backend.deliver(ctx.delivery("Checkpoint", str(sequence), "Running", sequence=sequence))
    ctx.checkpoint_due = False
