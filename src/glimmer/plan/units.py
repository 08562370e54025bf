"""The units of a pinned plan: the one enumeration the engine, its progress and the plan's own
conditions read.

A *unit* is what one result is about: per planned test, in plan order, a Node test has one unit
per distinct target, a Pair test one unit on ``targets[0]`` (server) and ``targets[1]``
(client), a Group test one unit over every target. The rule itself, a node named twice included
(one unit, since a result's identity is (test, first node)), lives in
:mod:`glimmer.verdict.units`, which the reports count with too: they sit below the plan.

A repeated target means one unit. ``glimmer run`` refuses a repeated ``--nodes`` name outright
(exit 2, naming the flag); a BurnInRun applied directly keeps its ``nodeNames`` verbatim, the
plan refuses the repeat for a Pair or Group test (a link needs two nodes, a rank its own node),
and for Node tests every consumer counts the one unit per node the engine runs. Four copies of
this enumeration once disagreed: a run that settled 6 results was reported as "the plan asked
for 9 executions and 6 have results".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from glimmer.api.pinned import PlanDocument, PlannedTest
from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Scope
from glimmer.verdict.units import unit_count, unit_scope, units_of

Key = tuple[str, str]  # (planned test, first node of the unit): a result's identity


def scope_of(spec: BurnInTestSpec) -> Scope:
    """The scope a test is dispatched on; an empty or unrecognised one runs as Node."""
    return unit_scope(spec.scope)


@dataclass(frozen=True)
class PlanUnit:
    """One unit: the planned test, its position in the plan (execution names carry it), and
    the nodes it loads."""

    index: int
    test: PlannedTest
    nodes: tuple[str, ...]

    @property
    def key(self) -> Key:
        return (self.test.name, self.nodes[0])

    @property
    def scope(self) -> Scope:
        return scope_of(self.test.spec)

    @property
    def executions(self) -> int:
        """Executions one attempt of the unit runs: one per node it loads."""
        return len(self.nodes)


class PlanUnits:
    """The units of one plan. The distinct targets are derived once (a pass over a 1,024-node
    run asks for them often); units are listed on demand, never all held."""

    def __init__(self, plan: PlanDocument) -> None:
        self.plan = plan
        self.targets: tuple[str, ...] = tuple(plan.targets)
        # Each distinct target's position among the distinct targets: the order Node units
        # start in, and (by its length) how many units each Node test has.
        self.order: dict[str, int] = {}
        for node in self.targets:
            self.order.setdefault(node, len(self.order))
        self.distinct: tuple[str, ...] = tuple(self.order)

    def of_test(self, index: int, test: PlannedTest) -> Iterator[PlanUnit]:
        """The units of the ``index``-th planned test."""
        for nodes in units_of(test.spec.scope, self.targets, self.distinct):
            yield PlanUnit(index, test, nodes)

    def link(self, index: int, test: PlannedTest) -> PlanUnit:
        """The one unit of the ``index``-th planned test, a Pair or Group test."""
        found = list(self.of_test(index, test))
        if len(found) != 1:
            raise ValueError(f"planned test {test.name} has {len(found)} units, not one")
        return found[0]

    def __iter__(self) -> Iterator[PlanUnit]:
        for index, test in enumerate(self.plan.tests):
            yield from self.of_test(index, test)

    def units_of(self, test: PlannedTest) -> int:
        """How many units (results, once settled) one planned test has."""
        return unit_count(test.spec.scope, self.targets, self.distinct)

    def executions_of(self, test: PlannedTest) -> int:
        """Node executions one attempt of every unit of ``test`` runs."""
        return sum(len(nodes) for nodes in units_of(test.spec.scope, self.targets, self.distinct))

    @property
    def count(self) -> int:
        """Every unit of the plan: the results a finished run holds (synthetic ones aside)."""
        return sum(self.units_of(test) for test in self.plan.tests)

    @property
    def executions(self) -> int:
        """Node executions of one attempt of every unit."""
        return sum(self.executions_of(test) for test in self.plan.tests)
