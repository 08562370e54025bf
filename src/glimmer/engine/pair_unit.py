"""The Pair-scope unit (§2.8): one verdict about the link between targets[0] (server) and
targets[1] (client). The server starts first; the client only once the server is Ready; the
client decides, and a lingering server is condemned, killed only after the record is durable.
"""

from __future__ import annotations

from glimmer.api.pinned import PlannedTest
from glimmer.api.threshold import to_contract
from glimmer.contract.vocab import Scope
from glimmer.engine.backend import Execution
from glimmer.engine.book import is_terminal
from glimmer.engine.checkpoint import maybe_checkpoint
from glimmer.engine.context import Pass
from glimmer.engine.harvest import ended_at, first_log_error, harvest_execution, waiting_detail
from glimmer.engine.names import service_name
from glimmer.engine.podspec import Placement
from glimmer.engine.results import attempt_number, complete, observe
from glimmer.engine.unit import (
    lost_execution,
    overdue,
    record_lost,
    record_machinery_error,
    start_rendezvous_unit,
)
from glimmer.plan.env import pair_place
from glimmer.plan.images import ImageError
from glimmer.verdict import apply_log_fetch_rule, combine_pair


def _placement(
    ctx: Pass, role: str, node: str, peer: str, service: str, both: tuple[str, str]
) -> Placement:
    place = pair_place("server" if role == "server" else "client", peer, service, ctx.namespace)
    return Placement(node, both, role, place, service)


def advance_pair(ctx: Pass, index: int, test: PlannedTest) -> bool:
    """Advance the one unit of a Pair test; True when anything was in flight or harvested."""
    server, client = ctx.units.link(index, test).nodes
    nodes = [server, client]
    result = ctx.book.get(test.name, server)
    if result is not None and is_terminal(result):
        return False
    attempt = attempt_number(result)
    names = (
        ctx.execution_name(index, server, attempt, "server"),
        ctx.execution_name(index, client, attempt, "client"),
    )
    sv, cl = (ctx.executions.get(n) for n in names)
    service = service_name(ctx.run.name, ctx.uid, index, attempt, Scope.PAIR)
    both = (server, client)
    lost = lost_execution(result, attempt, names, ctx.executions)
    if lost is not None:
        record_lost(ctx, test, nodes, attempt, lost)
        ctx.condemn(sv)
        ctx.condemn(cl)
        return True
    if sv is None:
        first = _placement(ctx, "server", both[0], both[1], service, both)
        return start_rendezvous_unit(ctx, index, test, attempt, names[0], both, first)
    if cl is None:
        return _gate(ctx, index, test, attempt, sv, names, service, both)
    return _decide(ctx, test, attempt, sv, cl, nodes)


def _gate(
    ctx: Pass,
    index: int,
    test: PlannedTest,
    attempt: int,
    sv: Execution,
    names: tuple[str, str],
    service: str,
    both: tuple[str, str],
) -> bool:
    nodes = list(both)
    if not sv.live:
        # The server ended before any client ran: combined with an absent client.
        harvest = harvest_execution(ctx.backend, sv)
        parsed = combine_pair(both[0], both[1], harvest.parsed, None)
        parsed = apply_log_fetch_rule(parsed, to_contract(test.spec.thresholds), harvest.log_error)
        evidence = [(sv.name, harvest.parsed.artifacts)]
        complete(ctx, test, nodes, attempt, names[0], parsed, sv.started_at, ended_at(sv), evidence)
        ctx.harvested += 1
        return True
    if overdue(ctx, test, sv):
        message = (
            f"the server endpoint on {both[0]} never became ready within its window (last phase "
            f'"{sv.phase.value}"), so the client was never started and the link was not '
            "measured; no verdict" + waiting_detail(sv)
        )
        record_machinery_error(ctx, test, nodes, attempt, names[0], message, sv)
        ctx.condemn(sv)
        return True
    if not sv.started:
        ctx.in_flight(test, waiting=True, rendezvous=True)
        return True
    observe(ctx, test, nodes, attempt, names[0], sv.started_at or ctx.now)
    if not sv.ready or not ctx.launch:
        ctx.in_flight(test, rendezvous=True)
        ctx.pending |= sv.ready  # Ready, but no new load while suspended or draining
        return True
    try:
        spec = ctx.execution(
            test,
            index,
            attempt,
            _placement(ctx, "client", both[1], both[0], service, both),
        )
    except ImageError as e:
        record_machinery_error(ctx, test, nodes, attempt, names[1], e.message, sv)
        ctx.condemn(sv)
        return True
    ctx.create(spec)  # the interlock was paid when the server started
    ctx.in_flight(test, waiting=True)
    return True


def _decide(
    ctx: Pass, test: PlannedTest, attempt: int, sv: Execution, cl: Execution, nodes: list[str]
) -> bool:
    if cl.live:
        if overdue(ctx, test, cl):
            message = (
                f"the client endpoint on {nodes[1]} never completed within its window (last "
                f'phase "{cl.phase.value}"); the link was not measured — no verdict'
                + waiting_detail(cl)
            )
            record_machinery_error(ctx, test, nodes, attempt, cl.name, message, sv)
            ctx.condemn(sv)
            ctx.condemn(cl)
            return True
        ctx.in_flight(test, waiting=not cl.started)
        if not cl.started:
            return True
        result = observe(ctx, test, nodes, attempt, cl.name, sv.started_at or ctx.now)
        maybe_checkpoint(ctx, test, result, cl)
        return True
    client_harvest = harvest_execution(ctx.backend, cl)
    server_harvest = None
    if sv.live:
        ctx.condemn(sv)  # a lingering server: killed only after the status write
    else:
        server_harvest = harvest_execution(ctx.backend, sv)
    parsed = combine_pair(
        nodes[0],
        nodes[1],
        server_harvest.parsed if server_harvest is not None else None,
        client_harvest.parsed,
    )
    log_error = first_log_error(client_harvest, server_harvest)
    parsed = apply_log_fetch_rule(parsed, to_contract(test.spec.thresholds), log_error)
    ended = ended_at(cl, None if sv.live else sv)
    evidence = [(cl.name, client_harvest.parsed.artifacts)]
    if server_harvest is not None:
        evidence.append((sv.name, server_harvest.parsed.artifacts))
    started = sv.started_at or cl.started_at
    complete(ctx, test, nodes, attempt, cl.name, parsed, started, ended, evidence)
    ctx.harvested += 1
    return True
