"""The execution pass (§2.6): tests in plan order, one at a time; units within a test in waves
under the live cap; then release every held node the run no longer has work on.

"Busy" is every node of a live execution's unit, every node of a terminated execution the status
has not recorded yet, and every node of an open result: a node stays held between segments,
repeats and retries, so the wave never leaks onto another target and a soak's cordon is never
released halfway. An execution that ended before any pass saw it (evicted a second after it
started) keeps its slot until it is harvested — once its slot went to the next node while its
retry was created too, one node over the cap — and being busy, it is harvested on the very next
pass instead of waiting for a slot. A harvest whose unit settled gives its nodes back within the
pass when nothing else holds them (:meth:`.context.Pass.free`), so the walk that follows starts
the next unit in its place.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import cast

from glimmer.api.pinned import PlannedTest
from glimmer.contract.vocab import TERMINAL_PHASES, Scope
from glimmer.engine.backend import Execution, ExecutionChanges
from glimmer.engine.book import is_terminal
from glimmer.engine.context import Pass
from glimmer.engine.cordon import account_stamps, release_idle
from glimmer.engine.group_unit import advance_group
from glimmer.engine.node_unit import advance_node
from glimmer.engine.pair_unit import advance_pair
from glimmer.engine.results import attempt_number
from glimmer.engine.waiting import WaitingUnits
from glimmer.plan.units import scope_of


def _unit_key(execution: Execution) -> str:
    spec = execution.spec
    return spec.unit_nodes[0] if spec.unit_nodes else spec.node


def _unrecorded(ctx: Pass, execution: Execution) -> bool:
    """A terminated execution whose unit the status does not know yet (no result at all): its
    ending is still to be harvested. (One of an open result is held through the result.)"""
    return ctx.book.get(execution.spec.test, _unit_key(execution)) is None


def _seed_busy(ctx: Pass, live: Iterable[Execution], loaded: Collection[str] | None) -> None:
    """``loaded``: the nodes of the live executions when the watch keeps them counted."""
    # Only an execution the engine created, or saw live, while its unit had no result can be
    # unrecorded: an engine that knows which those are looks only at them (a 1,024-node run
    # otherwise walks every execution it ever made on every pass); one that does not (a fresh
    # engine, or one whose last pass failed) looks at all of them once.
    still: set[str] = set()
    names = ctx.unrecorded
    if names is not None and ctx.watching:
        # A live execution that did not change since the last pass, which left it unrecorded
        # (re-checking every unit whose result it changed), is as it was: its nodes are loaded
        # already. Only the rest are looked at (:mod:`.watch`).
        still = (names & ctx.memory.watch.live.keys()) - ctx.watching_changed
        names = names - still
    watched = ctx.executions if names is None else _watched(ctx, names, live)
    unrecorded_nodes: set[str] = set()  # of those looked at: an unchanged live one is loaded
    holds, seen = ctx.unrecorded_holds, ctx.unrecorded_seen
    for execution in watched:
        if _unrecorded(ctx, execution):
            still.add(execution.name)
            seen.add(execution.name)
            for node in dict.fromkeys(execution.spec.unit_nodes or (execution.node,)):
                unrecorded_nodes.add(node)
                holds[node] = holds.get(node, 0) + 1
    ctx.unrecorded, ctx.unrecorded_nodes = still, unrecorded_nodes
    ctx.loaded = loaded
    kept = _kept_busy(ctx, loaded, unrecorded_nodes)
    if kept is None:
        ctx.memory.launched.clear()  # what was in hand is not known: walk from the cursors
    ctx.busy = kept if kept is not None else _fresh_busy(ctx, live, loaded, unrecorded_nodes)
    ctx.seeded = True


def _fresh_busy(
    ctx: Pass, live: Iterable[Execution], loaded: Collection[str] | None, unrecorded: set[str]
) -> set[str]:
    busy: set[str]
    if loaded is not None:
        busy = set(loaded)
    else:
        busy = set()
        for execution in live:
            spec = execution.spec
            if spec.unit_nodes:
                busy.update(spec.unit_nodes)
            else:
                busy.add(spec.node)
    busy |= unrecorded
    busy.update(ctx.book.holding_nodes())
    return busy


def _kept_busy(ctx: Pass, loaded: Collection[str] | None, unrecorded: set[str]) -> set[str] | None:
    """The busy set the engine's last pass over this run ended with, brought up to date by
    looking again only at the nodes whose being busy can have changed since; None when that
    is not known (no such pass, or the watch or the index was not reused).

    A node is busy while a live execution loads it, an execution without a result holds it,
    or an open result does. Between two passes of this engine, the first changes only for the
    nodes of the executions the watch re-read; the second for the nodes of the unrecorded
    executions, then and now; the third for the nodes of the results the last pass changed.
    The last pass also added the nodes it started units on. Those are the nodes looked at
    again (:func:`recheck_after`): copying a 1,024-node busy set every pass was 5 % of a run
    at cap 1,024."""
    memory = ctx.memory
    kept, recheck = memory.busy, memory.busy_recheck
    if kept is None or recheck is None or loaded is None or not (ctx.watching and ctx.reused):
        return None
    holding = ctx.book.holding_nodes()
    dropped: list[str] = []
    for node in recheck | memory.watch.changed_nodes:
        if node in loaded or node in holding or node in unrecorded:
            kept.add(node)
        elif node in kept:
            kept.remove(node)
            dropped.append(node)
    kept |= unrecorded
    if dropped and memory.launched:
        _unlaunch(ctx, dropped)
    ctx.dropped = dropped
    return kept


def _unlaunch(ctx: Pass, dropped: Iterable[str]) -> None:
    """Nodes that stopped being busy since the last pass without a result of a Node test (an
    execution gone before any pass recorded it) are to be started again: that test's walk for
    new nodes goes back to the first of them."""
    launched, order, book = ctx.memory.launched, ctx.target_order, ctx.book
    for test, at in launched.items():
        for node in dropped:
            position = order.get(node)
            if position is not None and position < at and book.get(test, node) is None:
                at = position
        launched[test] = at


def recheck_after(ctx: Pass) -> set[str]:
    """The nodes whose being busy the next pass looks at again (:func:`_kept_busy`)."""
    book = ctx.book
    nodes = ctx.occupied | ctx.unrecorded_nodes
    for key in book.changed:
        nodes.add(key[1])
        result = book.get(*key)
        if result is not None and result.nodes:
            nodes.update(result.nodes)
    return nodes


def _watched(ctx: Pass, names: set[str], live: Iterable[Execution]) -> list[Execution]:
    found = [ctx.executions.get(name) for name in names]
    if not ctx.reused:
        # The status may have been written by another engine: its live executions without a
        # result are watched too. (Over the status this engine wrote, every one is in names.)
        found += [e for e in live if e.name not in names and _unrecorded(ctx, e)]
    return [e for e in found if e is not None]


def unrecorded_after(ctx: Pass) -> set[str]:
    """What the next pass of this engine watches: the executions still without a result, and
    those created by this pass."""
    if not ctx.watching:
        still = {name for name in ctx.unrecorded or () if _is_unrecorded(ctx, name)}
        return still | ctx.created
    live, touched = ctx.memory.watch.live, ctx.book.changed
    previous = ctx.unrecorded or set()
    units = ctx.memory.waiting
    if units is None:
        units = ctx.memory.waiting = WaitingUnits()
    for name in units.unit.keys() - previous:
        units.drop(name)
    for name in previous - units.unit.keys():
        _note(ctx, units, name)
    # Live at the pass's start with its unit untouched by the pass: still unrecorded, as it
    # was. Only the names whose unit the pass touched, and those no longer live, are looked at
    # again, found by their unit (:mod:`.waiting`).
    in_live = previous & live.keys()
    again: set[str] = set()
    for unit in touched:
        again |= units.of(unit)
    again &= in_live
    still = in_live - again
    for name in (previous - in_live) | again:
        if _is_unrecorded(ctx, name):
            still.add(name)
    after = still | ctx.created
    for name in previous - after:
        units.drop(name)
    for name in after - previous:
        _note(ctx, units, name)
    return after


def _note(ctx: Pass, units: WaitingUnits, name: str) -> None:
    """Put ``name`` under its unit, read from its execution (or the request this pass made)."""
    execution = ctx.memory.watch.live.get(name) or ctx.executions.get(name)
    if execution is not None:
        units.add(name, (execution.spec.test, _unit_key(execution)))
    elif name in ctx.created_units:
        units.add(name, ctx.created_units[name])


def _is_unrecorded(ctx: Pass, name: str) -> bool:
    execution = ctx.executions.get(name)
    return execution is not None and _unrecorded(ctx, execution)


def _condemn_stale(ctx: Pass, live: Iterable[Execution]) -> None:
    """A live execution whose attempt the status already closed (its record is durable) is
    left over from a pass that stopped before its kill: condemn it again. A unit asleep has
    its open attempt's own execution, unchanged: it is not looked at."""
    asleep = ctx.memory.sleepers.executions()
    for execution in live:
        if execution.name in asleep:
            continue
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


def _wake(ctx: Pass, changed: Collection[str] | None) -> None:
    """Wake the sleeping units that something happened to since the engine's last pass: their
    execution changed (or vanished), their result changed, or their wake time came.
    ``changed``: the executions the watch re-read (None: not known, so every sleeping unit's
    execution is compared with the one it was left with)."""
    sleepers = ctx.memory.sleepers
    if not sleepers:
        return
    sleepers.wake_due(ctx.now)
    if changed is not None:
        for name in changed:
            sleepers.wake_execution(name)
        return
    for name in list(sleepers.executions()):
        key = sleepers.by_execution[name]
        seen = ctx.executions.get(name)
        left = sleepers.units[key].execution
        if seen is not left and seen != left:
            sleepers.wake(key)


def _observe_live(
    ctx: Pass,
) -> tuple[Collection[Execution], Collection[str] | None, Collection[str] | None]:
    """The live executions, their nodes when counted, and the names that changed since the
    engine's last pass (None: not known). See :mod:`.watch`."""
    feed = getattr(ctx.executions, "changed_since", None)
    if feed is None:
        return ctx.executions.live(), None, None
    changes = cast(ExecutionChanges, ctx.executions)
    watch = ctx.memory.watch
    if not ctx.reused or watch.mark is None:
        mark, _ = changes.changed_since(None)
        watch.reset(mark, ctx.executions.live())
        return watch.live.values(), watch.nodes.keys(), None
    mark, names = changes.changed_since(watch.mark)
    changed = watch.refresh(mark, names, ctx.executions)
    return watch.live.values(), watch.nodes.keys(), changed


def _fail_fast_stop(ctx: Pass) -> bool:
    if not ctx.plan.fail_fast:
        return False
    return any(t.required and ctx.book.has_failed(t.name) for t in ctx.plan.tests)


def _advance_nodes(ctx: Pass, index: int, test: PlannedTest) -> bool:
    """A Node test (one unit per distinct target, :mod:`glimmer.plan.units`): every node the run
    holds first, then new nodes in target order while the cap allows. Launching adds to
    ``busy`` and holding nodes need no slot, so this makes the same decisions as one walk in
    target order, at the cost of the work there is: a unit asleep (:mod:`.sleep`) counts as
    in flight without a visit, and new nodes are looked for from the test's cursor on."""
    settled = ctx.book.settled_nodes(test.name)
    order = ctx.target_order
    if len(settled) >= len(order):
        return False
    sleepers = ctx.memory.sleepers
    asleep = sleepers.of_test(test.name)
    sleeping = len(asleep)  # counted now: a unit visited below may fall asleep
    active = False
    if sleeping:
        ctx.in_flight(test, waiting=sleepers.waiting_in(test.name))
        active = True
    awake = ctx.busy.difference(asleep) if sleeping else ctx.busy
    held = [n for n in awake if n in order and n not in settled]
    held.sort(key=order.__getitem__)
    # Counted before the visits: a held unit that settles during them joins the book's live
    # set, and counted twice (settled and held) it hid the nodes still to start.
    in_hand = len(settled) + len(held) + sleeping
    for node in held:
        if advance_node(ctx, index, test, node):
            active = True
    if len(order) - in_hand <= 0:
        return active  # every node has settled or is in hand
    if not ctx.launch or len(ctx.busy) >= ctx.cap:
        ctx.pending = True  # nodes still to start, no slot (or no launching) now
        return True
    distinct = ctx.units.distinct
    launched = ctx.memory.launched
    start = _walk_start(ctx, test, distinct)
    gap: int | None = None  # the first target this walk left out of hand
    busy, book = ctx.busy, ctx.book
    for at in range(start, len(distinct)):  # no copy of the rest
        node = distinct[at]
        if node in settled or node in busy:
            continue  # settled, or in hand (held, or launched by this very walk)
        if not ctx.launch or len(busy) >= ctx.cap:
            ctx.pending = True
            launched[test.name] = at if gap is None else gap
            return True
        if advance_node(ctx, index, test, node):
            active = True
        if gap is None and node not in busy and book.get(test.name, node) is None:
            gap = at
    launched[test.name] = len(distinct) if gap is None else gap
    return active


def _walk_start(ctx: Pass, test: PlannedTest, distinct: Sequence[str]) -> int:
    """Where the walk for new nodes starts: after the targets with a result (the cursor) and
    after those the last walk left in hand (a result, or busy), which are still so unless the
    seeding dropped them (:func:`_unlaunch`). At cap 1,024 the units launched and not yet seen
    start lie after the cursor, and stepping over them every pass was 5 % of a run."""
    return max(_cursor(ctx, test, distinct), ctx.memory.launched.get(test.name, 0))


def _cursor(ctx: Pass, test: PlannedTest, distinct: Sequence[str]) -> int:
    """How many of the test's first targets already have a result (settled, or held through
    an open one): the walk for new nodes starts after them. Kept with the run's memory and
    moved on as results appear; a fresh engine starts from the first target."""
    cursor = ctx.memory.cursor
    at = cursor.get(test.name, 0)
    book = ctx.book
    while at < len(distinct) and book.get(test.name, distinct[at]) is not None:
        at += 1
    cursor[test.name] = at
    return at


def _advance_test(ctx: Pass, index: int, test: PlannedTest) -> bool:
    scope = scope_of(test.spec)
    if scope is Scope.PAIR:
        return advance_pair(ctx, index, test)
    if scope is Scope.GROUP:
        return advance_group(ctx, index, test)
    return _advance_nodes(ctx, index, test)


def _release_candidates(ctx: Pass, trusted: bool) -> set[str] | None:
    """The held nodes this pass may have left idle, or None when every held one must be looked
    at (at cap 1,024 the difference of every held node against the busy set, every pass, was
    6 % of a 4,096-node run).

    A held node stops being busy only when an execution on it changed (it ended, or went) or a
    result on it changed (it settled, or recorded an execution that had none). The busy set is
    seeded at the start of a pass, so a node whose unit settled during the pass still looks
    busy at its end: the nodes a pass touched are looked at again by the next one. So, when the
    previous pass of this engine released every idle node and the watch names every execution
    that changed since, the nodes touched by this pass and by the previous one are the only
    ones that can be idle."""
    touched = _touched_nodes(ctx)
    previous, ctx.memory.touched = ctx.memory.touched, touched
    if touched is None or previous is None or not (trusted and ctx.reused):
        return None
    return touched | previous


def _touched_nodes(ctx: Pass) -> set[str] | None:
    """The nodes of the executions and results this pass saw change; None when not known.

    An execution's nodes are those of its reading before the change and after it, as the watch
    found them (:attr:`.watch.LiveWatch.changed_nodes`): one deleted since is no longer there to
    ask, and asking the substrate for it made every pass that followed a deletion look at every
    held node. An execution that was not live before it changed loaded no node; if it held one
    while unrecorded, its unit's result changes when it is harvested or found lost."""
    if not ctx.watching:
        return None
    nodes = set(ctx.memory.watch.changed_nodes)
    for name, node in ctx.book.changed:
        result = ctx.book.get(name, node)
        if result is None:
            return None
        nodes.update(result.nodes or (node,))
    return nodes


def execute(ctx: Pass) -> None:
    """Sweep the plan; the flags on ``ctx`` say what was found."""
    live, loaded, changed = _observe_live(ctx)
    if changed is not None:
        ctx.watching, ctx.watching_changed = True, set(changed)
    # Until this pass has released what it no longer holds, the memory cannot say so.
    trusted, ctx.memory.idle_released = ctx.memory.idle_released, False
    _wake(ctx, changed)
    _seed_busy(ctx, live, loaded)
    if trusted and ctx.dropped is not None:
        # The last pass released every idle cordon against the busy set it ended with, which
        # this one kept: the only cordons that can be idle now are on the nodes it dropped.
        ctx.swept = True
        ctx.freed.update(ctx.dropped)
    if ctx.audit_stamps:
        account_stamps(ctx)
    if changed is None:
        _condemn_stale(ctx, live)
    else:
        # Over the status this engine wrote, only an execution that changed can be stale.
        watched = ctx.memory.watch.live
        _condemn_stale(ctx, [watched[n] for n in changed if n in watched])
    for index, test in enumerate(ctx.plan.tests):
        if _fail_fast_stop(ctx):
            break
        if _advance_test(ctx, index, test):
            break  # test k+1 starts nowhere until test k owes nothing anywhere
    release_idle(ctx, _release_candidates(ctx, trusted))
    ctx.memory.idle_released = True
