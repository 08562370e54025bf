"""The Group-scope unit (§2.9): one verdict about the collective over every target, rank i on
targets[i]. Rank 0 starts first; every worker is created at once when it is Ready; the unit
waits for every rank, because a silent rank is never a pass."""

from __future__ import annotations

from glimmer.api.pinned import PlannedTest
from glimmer.api.threshold import to_contract
from glimmer.contract.vocab import Scope
from glimmer.engine.backend import Execution
from glimmer.engine.book import is_terminal
from glimmer.engine.checkpoint import maybe_checkpoint
from glimmer.engine.context import Pass
from glimmer.engine.harvest import (
    Harvest,
    ended_at,
    first_log_error,
    harvest_execution,
    waiting_detail,
)
from glimmer.engine.names import rank_role, service_name
from glimmer.engine.podspec import Placement
from glimmer.engine.results import attempt_number, complete, observe
from glimmer.engine.unit import (
    lost_execution,
    overdue,
    record_lost,
    record_machinery_error,
    start_rendezvous_unit,
)
from glimmer.plan.env import group_place
from glimmer.plan.images import ImageError
from glimmer.verdict import apply_log_fetch_rule, combine_group
from glimmer.verdict.text import plural

MAX_NAMED_RANKS = 4


def _placement(ctx: Pass, rank: int, targets: list[str], service: str) -> Placement:
    place = group_place(rank, len(targets), targets[0], service, ctx.namespace)
    return Placement(targets[rank], tuple(targets), rank_role(rank), place, service)


def advance_group(ctx: Pass, index: int, test: PlannedTest) -> bool:
    """Advance the one unit of a Group test; True when anything was in flight or harvested."""
    targets = list(ctx.units.link(index, test).nodes)
    result = ctx.book.get(test.name, targets[0])
    if result is not None and is_terminal(result):
        return False
    attempt = attempt_number(result)
    names = [
        ctx.execution_name(index, node, attempt, rank_role(rank))
        for rank, node in enumerate(targets)
    ]
    ranks = [ctx.executions.get(n) for n in names]
    service = service_name(ctx.run.name, ctx.uid, index, attempt, Scope.GROUP)
    lost = lost_execution(result, attempt, names[:1], ctx.executions)
    if lost is not None:
        record_lost(ctx, test, targets, attempt, lost)
        _condemn_all(ctx, ranks)
        return True
    root = ranks[0]
    if root is None:
        first = _placement(ctx, 0, targets, service)
        return start_rendezvous_unit(ctx, index, test, attempt, names[0], targets, first)
    if any(r is None for r in ranks[1:]):
        return _gather(ctx, index, test, attempt, ranks, targets, service)
    return _decide(ctx, test, attempt, [r for r in ranks if r is not None], targets)


def _condemn_all(ctx: Pass, ranks: list[Execution | None]) -> None:
    for r in ranks:
        ctx.condemn(r)


def _harvest_present(ctx: Pass, ranks: list[Execution | None]) -> list[Harvest | None]:
    return [
        harvest_execution(ctx.backend, r) if r is not None and not r.live else None for r in ranks
    ]


def _settle(
    ctx: Pass, test: PlannedTest, attempt: int, ranks: list[Execution | None], targets: list[str]
) -> None:
    harvests = _harvest_present(ctx, ranks)
    parsed = combine_group(targets, [h.parsed if h is not None else None for h in harvests])
    parsed = apply_log_fetch_rule(
        parsed, to_contract(test.spec.thresholds), first_log_error(*harvests)
    )
    root = ranks[0]
    name = root.name if root is not None else ""
    started = root.started_at if root is not None else None
    ended = ended_at(*(r for r in ranks if r is not None and not r.live))
    evidence = [
        (r.name, h.parsed.artifacts)
        for r, h in zip(ranks, harvests, strict=True)
        if r is not None and h is not None
    ]
    complete(ctx, test, targets, attempt, name, parsed, started, ended, evidence)
    _condemn_all(ctx, ranks)
    ctx.harvested += 1


def _gather(
    ctx: Pass,
    index: int,
    test: PlannedTest,
    attempt: int,
    ranks: list[Execution | None],
    targets: list[str],
    service: str,
) -> bool:
    root = ranks[0]
    assert root is not None
    if not root.live:
        _settle(ctx, test, attempt, ranks, targets)
        return True
    if overdue(ctx, test, root):
        n = len(targets)
        message = (
            f"rank 0 (the root) on {targets[0]} never became ready within its window (last "
            f'phase "{root.phase.value}"), so the other {n - 1} {plural(n - 1, "rank")} were '
            "never started and the collective was not measured; no verdict" + waiting_detail(root)
        )
        record_machinery_error(ctx, test, targets, attempt, root.name, message, root)
        _condemn_all(ctx, ranks)
        return True
    if not root.started:
        ctx.in_flight(test, waiting=True, rendezvous=True)
        return True
    result = observe(ctx, test, targets, attempt, root.name, root.started_at or ctx.now)
    if not root.ready or not ctx.launch:
        ctx.in_flight(test, rendezvous=True)
        ctx.pending |= root.ready  # Ready, but no new load while suspended or draining
        return True
    for rank, existing in enumerate(ranks):
        if existing is not None:
            continue
        try:
            spec = ctx.execution(test, index, attempt, _placement(ctx, rank, targets, service))
        except ImageError as e:
            record_machinery_error(ctx, test, targets, attempt, root.name, e.message, root)
            _condemn_all(ctx, ranks)
            return True
        ctx.create(spec)  # no interlock re-check: paid at the root
    ctx.in_flight(test, waiting=True)
    maybe_checkpoint(ctx, test, result, root)  # as a pass finding every rank would
    return True


def _hang_message(ranks: list[Execution], targets: list[str]) -> str:
    silent = [
        f"rank {i} ({targets[i]}) {'never finished' if r.started else 'never started'}"
        for i, r in enumerate(ranks)
        if r.live
    ]
    shown = "; ".join(silent[:MAX_NAMED_RANKS])
    if len(silent) > MAX_NAMED_RANKS:
        shown += f"; and {len(silent) - MAX_NAMED_RANKS} more"
    k, n = len(silent), len(ranks)
    return (
        f"the collective did not complete within its window — {k} of {n} "
        f"{plural(n, 'rank')} did not report ({shown}); no verdict"
    )


def _decide(
    ctx: Pass, test: PlannedTest, attempt: int, ranks: list[Execution], targets: list[str]
) -> bool:
    if any(r.live for r in ranks):
        if any(r.live and overdue(ctx, test, r) for r in ranks):
            message = _hang_message(ranks, targets) + waiting_detail(ranks[0])
            record_machinery_error(ctx, test, targets, attempt, ranks[0].name, message, ranks[0])
            _condemn_all(ctx, list(ranks))
            return True
        ctx.in_flight(test, waiting=not all(r.started for r in ranks))
        result = observe(ctx, test, targets, attempt, ranks[0].name, ranks[0].started_at or ctx.now)
        if ranks[0].live:
            maybe_checkpoint(ctx, test, result, ranks[0])
        return True
    _settle(ctx, test, attempt, list(ranks), targets)
    return True
