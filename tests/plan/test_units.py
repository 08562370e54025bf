"""The units of a pinned plan (plan/units.py) and the rule they follow (verdict/units.py): one
per distinct target for a Node test, one for a Pair or Group test, none without targets."""

from __future__ import annotations

from typing import Any

from plan_builders import profile, spec

from glimmer.api.pinned import PlanDocument
from glimmer.contract.vocab import Scope
from glimmer.plan.build import build_plan
from glimmer.plan.resolve import plan_tests
from glimmer.plan.review import node_executions
from glimmer.plan.units import PlanUnits, scope_of
from glimmer.verdict.units import count_units, unit_count, unit_scope, units_of


def _plan(targets: list[str], *entries: dict[str, Any], **named: Any) -> PlanDocument:
    prof = profile(*entries)
    return build_plan(prof, plan_tests(prof, named), targets, 8, False)


def test_a_node_test_has_one_unit_per_distinct_target_in_first_named_order() -> None:
    plan = _plan(["n2", "n1", "n2", "n3", "n1"], {"testRef": "c"}, c=spec())
    units = PlanUnits(plan)
    assert [u.nodes for u in units] == [("n2",), ("n1",), ("n3",)]
    assert [u.key for u in units] == [("c", "n2"), ("c", "n1"), ("c", "n3")]
    assert units.order == {"n2": 0, "n1": 1, "n3": 2}
    assert (units.count, units.executions) == (3, 3)


def test_a_pair_test_is_one_unit_on_its_server_and_client_and_a_group_one_over_all() -> None:
    plan = _plan(
        ["a", "b"],
        {"testRef": "burn"},
        {"testRef": "link"},
        {"testRef": "all"},
        burn=spec(),
        link=spec("ib-write-bw", scope="Pair"),
        all=spec("nccl", scope="Group"),
    )
    units = list(PlanUnits(plan))
    assert [(u.index, u.test.name, u.nodes, u.scope) for u in units] == [
        (0, "burn", ("a",), Scope.NODE),
        (0, "burn", ("b",), Scope.NODE),
        (1, "link", ("a", "b"), Scope.PAIR),
        (2, "all", ("a", "b"), Scope.GROUP),
    ]
    assert [u.executions for u in units] == [1, 1, 2, 2]
    assert PlanUnits(plan).count == 4
    assert PlanUnits(plan).executions == node_executions(plan) == 6


def test_a_plan_without_targets_has_no_units() -> None:
    plan = PlanDocument(targets=[], profile_entries=[], tests=[])
    assert list(PlanUnits(plan)) == [] and PlanUnits(plan).count == 0
    assert units_of(Scope.GROUP, []) == [] and unit_count(Scope.PAIR, []) == 0


def test_the_rule_counts_what_it_lists_for_every_scope() -> None:
    targets = ["x", "y", "x", "z"]
    for scope in (Scope.NODE, Scope.PAIR, Scope.GROUP, "Node", "", None):
        assert unit_count(scope, targets) == len(units_of(scope, targets))
    assert count_units([Scope.NODE, Scope.PAIR, Scope.GROUP], targets) == 3 + 1 + 1


def test_a_bare_or_unknown_scope_word_is_dispatched_as_its_enum_or_node() -> None:
    assert unit_scope("Pair") is Scope.PAIR and unit_scope("Group") is Scope.GROUP
    assert unit_scope("Node") is Scope.NODE and unit_scope("Rack") is Scope.NODE
    assert unit_scope(None) is Scope.NODE
    assert scope_of(spec("ib-write-bw", scope="Pair")) is Scope.PAIR
