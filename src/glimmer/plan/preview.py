"""What a run would do, without starting it: the start decision and its first execution.

``glimmer run --dry-run`` shows this. The decision is :func:`~glimmer.plan.start.start_run`'s
own, over no other runs; the first execution is the first planned test on the first target (a
Pair's server, a Group's rank 0) with the environment its runner would see. A Pair or Group
rendezvous service is named from the run's uid, which a run not yet submitted does not have,
so the preview writes ``SERVICE_PLACEHOLDER`` in its place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from glimmer.api.pinned import PlanDocument, PlannedTest
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Scope
from glimmer.plan.decision import StartDecision
from glimmer.plan.env import (
    GroupPlace,
    PairPlace,
    effective_env,
    execution_duration,
    group_place,
    pair_place,
    runner_env,
)
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.start import start_run
from glimmer.plan.units import scope_of

SERVICE_PLACEHOLDER = "<service>"


@dataclass(frozen=True)
class FirstExecution:
    """The first execution a plan asks for: which test, where, in what role, with what env."""

    test: str
    node: str
    role: str  # "", server, rank-0
    duration_seconds: int
    env: tuple[tuple[str, str], ...]


def first_execution(plan: PlanDocument, namespace: str) -> FirstExecution | None:
    """The first planned test's first execution; None when the plan has no test or target."""
    if not plan.tests or not plan.targets:
        return None
    test: PlannedTest = plan.tests[0]
    targets = plan.targets
    scope = scope_of(test.spec)
    place: PairPlace | GroupPlace | None = None
    role = ""
    if scope is Scope.PAIR and len(targets) > 1:
        place = pair_place("server", targets[1], SERVICE_PLACEHOLDER, namespace)
        role = "server"
    elif scope is Scope.GROUP:
        place = group_place(0, len(targets), targets[0], SERVICE_PLACEHOLDER, namespace)
        role = "rank-0"
    env = effective_env(runner_env(test.spec, 1, test.axes, place))
    return FirstExecution(
        test=test.name,
        node=targets[0],
        role=role,
        duration_seconds=execution_duration(test.spec),
        env=tuple((name, var.value) for name, var in env.items() if var.value is not None),
    )


def preview(
    run: BurnInRun,
    profile: BurnInProfile | None,
    tests: Mapping[str, BurnInTestSpec],
    nodes: Sequence[NodeInfo],
    now: datetime,
) -> StartDecision:
    """The decision :func:`start_run` would make for ``run`` alone on ``nodes`` at ``now``."""
    return start_run(run, profile, tests, nodes, (), now)
