"""The execution pass (§2.6): tests in plan order, one at a time; units within a test in waves
under the live cap; then release every held node the run no longer has work on.

"Busy" is every node of a live execution's unit, every node of a terminated execution the status
has not recorded yet, and every node of an open result: a node stays held between segments,
repeats and retries, so the wave never leaks onto another target and a soak's cordon is never
released halfway. An execution that ended before any pass saw it (evicted a second after it
started) keeps its slot until it is harvested — once its slot went to the next node while its
retry was created too, one node over the cap — and being busy, it is harvested on the very next
pass instead of waiting for a slot.
"""

from __future__ import annotations

from glimmer.api.pinned import PlannedTest
from glimmer.contract.vocab import TERMINAL_PHASES, Scope
from glimmer.engine.backend import Execution
from glimmer.engine.book import is_terminal
from glimmer.engine.context import Pass
from glimmer.engine.cordon import account_stamps, release_idle
from glimmer.engine.group_unit import advance_group
from glimmer.engine.node_unit import advance_node
from glimmer.engine.pair_unit import advance_pair
from glimmer.engine.results import attempt_number
from glimmer.plan.units import scope_of


def _unit_key(execution: Execution) -> str:
    spec = execution.spec
    return spec.unit_nodes[0] if spec.unit_nodes else spec.node


def _unrecorded(ctx: Pass, execution: Execution) -> bool:
    """A terminated execution whose unit the status does not know yet (no result at all): its
    ending is still to be harvested. (One of an open result is held through the result.)"""
    return ctx.book.get(execution.spec.test, _unit_key(execution)) is None


def _seed_busy(ctx: Pass) -> None:
    busy: set[str] = set()
    for execution in ctx.executions.live():
        busy.update(execution.spec.unit_nodes or (execution.node,))
    # Only an execution the engine created, or saw live, while its unit had no result can be
    # unrecorded: an engine that knows which those are looks only at them (a 1,024-node run
    # otherwise walks every execution it ever made on every pass); one that does not (a fresh
    # engine, or one whose last pass failed) looks at all of them once.
    watched = ctx.executions if ctx.unrecorded is None else _watched(ctx, ctx.unrecorded)
    still: set[str] = set()
    for execution in watched:
        if _unrecorded(ctx, execution):
            still.add(execution.name)
            busy.update(execution.spec.unit_nodes or (execution.node,))
    ctx.unrecorded = still
    busy |= ctx.book.holding_nodes()
    ctx.busy = busy


def _watched(ctx: Pass, names: set[str]) -> list[Execution]:
    found = [ctx.executions.get(name) for name in names]
    found += ctx.executions.live()
    return [e for e in found if e is not None]


def unrecorded_after(ctx: Pass) -> set[str]:
    """What the next pass of this engine watches: the executions still without a result, and
    those created by this pass."""
    still = {name for name in ctx.unrecorded or () if _is_unrecorded(ctx, name)}
    return still | ctx.created


def _is_unrecorded(ctx: Pass, name: str) -> bool:
    execution = ctx.executions.get(name)
    return execution is not None and _unrecorded(ctx, execution)


def _condemn_stale(ctx: Pass) -> None:
    """A live execution whose attempt the status already closed (its record is durable) is
    left over from a pass that stopped before its kill: condemn it again."""
    for execution in ctx.executions.live():
        spec = execution.spec
        result = ctx.book.get(spec.test, spec.unit_nodes[0] if spec.unit_nodes else spec.node)
        if result is None:
            continue
        attempts = result.attempts
        last = attempts[-1] if attempts else None
        if last is not None and last.attempt == spec.attempt and last.phase not in TERMINAL_PHASES:
            continue  # the usual case: the open attempt's own execution
        if is_terminal(result) or attempt_number(result) > spec.attempt:
            ctx.condemn(execution)


def _fail_fast_stop(ctx: Pass) -> bool:
    if not ctx.plan.fail_fast:
        return False
    return any(t.required and ctx.book.has_failed(t.name) for t in ctx.plan.tests)


def _advance_nodes(ctx: Pass, index: int, test: PlannedTest) -> bool:
    """A Node test (one unit per distinct target, :mod:`glimmer.plan.units`): every node the run
    holds first, then new nodes in target order while the cap allows. Launching adds to
    ``busy`` and holding nodes need no slot, so this makes the same decisions as one walk in
    target order, at the cost of the work there is."""
    settled = ctx.book.settled_nodes(test.name)
    order = ctx.target_order
    if len(settled) >= len(order):
        return False
    active = False
    held = [n for n in ctx.busy if n in order and n not in settled]
    held.sort(key=order.__getitem__)
    for node in held:
        if advance_node(ctx, index, test, node):
            active = True
    if len(order) - len(settled) - len(held) <= 0:
        return active  # every node has settled or is in hand
    if not ctx.launch or len(ctx.busy) >= ctx.cap:
        ctx.pending = True  # nodes still to start, no slot (or no launching) now
        return True
    skip = settled | set(held)
    for node in ctx.units.distinct:
        if node in skip:
            continue
        if not ctx.launch or len(ctx.busy) >= ctx.cap:
            ctx.pending = True
            return True
        if advance_node(ctx, index, test, node):
            active = True
    return active


def _advance_test(ctx: Pass, index: int, test: PlannedTest) -> bool:
    scope = scope_of(test.spec)
    if scope is Scope.PAIR:
        return advance_pair(ctx, index, test)
    if scope is Scope.GROUP:
        return advance_group(ctx, index, test)
    return _advance_nodes(ctx, index, test)


def execute(ctx: Pass) -> None:
    """Sweep the plan; the flags on ``ctx`` say what was found."""
    _seed_busy(ctx)
    if ctx.audit_stamps:
        account_stamps(ctx)
    _condemn_stale(ctx)
    for index, test in enumerate(ctx.plan.tests):
        if _fail_fast_stop(ctx):
            break
        if _advance_test(ctx, index, test):
            break  # test k+1 starts nowhere until test k owes nothing anywhere
    release_idle(ctx)
