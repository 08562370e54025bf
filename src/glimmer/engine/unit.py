"""What every unit (Node, Pair, Group) shares: when an execution is overdue, when an open
attempt has lost its execution, and how a machinery failure is recorded as an Error attempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from glimmer.api.pinned import PlannedTest
from glimmer.api.result import TestResult
from glimmer.contract.vocab import Scope
from glimmer.engine.backend import Execution, ExecutionSet, Rendezvous
from glimmer.engine.context import Pass
from glimmer.engine.cordon import cordon_node
from glimmer.engine.podspec import Placement
from glimmer.engine.results import complete, machinery_error, open_attempt_of
from glimmer.plan.env import GROUP_RENDEZVOUS_GRACE_SECONDS, pod_window_seconds
from glimmer.plan.images import ImageError
from glimmer.plan.slots import may_start
from glimmer.plan.units import scope_of


def window_seconds(test: PlannedTest) -> int:
    """How long an execution may exist without completing: the pod window, plus the Group
    rendezvous grace at Group scope (its ranks wait for peers not created yet)."""
    window = pod_window_seconds(test.spec)
    if scope_of(test.spec) is Scope.GROUP:
        window += GROUP_RENDEZVOUS_GRACE_SECONDS
    return window


def overdue(ctx: Pass, test: PlannedTest, execution: Execution) -> bool:
    """Created longer ago than the test's window allows (one cutoff per test per pass)."""
    cutoff = ctx.cutoffs.get(test.name)
    if cutoff is None:
        cutoff = ctx.cutoffs[test.name] = ctx.now - timedelta(seconds=window_seconds(test))
    return execution.created_at < cutoff


def lost_execution(
    result: TestResult | None, attempt: int, names: Sequence[str], executions: ExecutionSet
) -> str | None:
    """The name of the execution an open attempt was observed running on, if it has vanished
    (deleted or evicted away) — such an attempt must be recorded, never silently re-run."""
    current = open_attempt_of(result)
    if current is None or current.attempt != attempt or not current.pod_name:
        return None
    if current.pod_name in names and executions.get(current.pod_name) is None:
        return current.pod_name
    return None


def record_lost(ctx: Pass, test: PlannedTest, nodes: list[str], attempt: int, name: str) -> None:
    message = (
        f"execution {name} disappeared before it reported (deleted or evicted); the runner's "
        "result was never seen — no verdict"
    )
    complete(ctx, test, nodes, attempt, name, machinery_error(message))
    ctx.harvested += 1


def record_machinery_error(
    ctx: Pass,
    test: PlannedTest,
    nodes: list[str],
    attempt: int,
    name: str,
    message: str,
    started: Execution | None = None,
) -> None:
    """Record an Error attempt the runner never got to decide (overdue, unbuildable)."""
    started_at = started.started_at if started is not None else None
    complete(ctx, test, nodes, attempt, name, machinery_error(message), started_at)
    ctx.harvested += 1


def start_rendezvous_unit(
    ctx: Pass,
    index: int,
    test: PlannedTest,
    attempt: int,
    name: str,
    nodes: Sequence[str],
    first: Placement,
) -> bool:
    """Start a Pair or Group unit: its first execution (the server, or rank 0) once the wave
    has room for every node of the unit, after the rendezvous service exists and every node is
    cordoned. The rest of the unit is created once that first execution is Ready."""
    if not ctx.launch or not may_start(ctx.busy, nodes, ctx.cap):
        ctx.pending = True
        return True
    ctx.backend.ensure_rendezvous(
        Rendezvous(first.service, ctx.namespace, ctx.run.name, ctx.uid, test.name, attempt)
    )
    try:
        spec = ctx.execution(test, index, attempt, first)
    except ImageError as e:
        record_machinery_error(ctx, test, list(nodes), attempt, name, e.message)
        return True
    for node in nodes:
        cordon_node(ctx, node, test)
    ctx.create(spec)
    ctx.occupy(nodes)
    ctx.in_flight(test, waiting=True, rendezvous=True)
    return True
