"""Slot costs and the wave interlock (§2.6, invariant 9), with property tests."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from glimmer.plan.slots import effective_cap, may_start, slots_needed, unit_cost

NODE_NAMES = st.sampled_from([f"n{i}" for i in range(12)])


def test_unit_costs_are_one_two_and_n() -> None:
    targets = ["a", "b", "c", "d", "e"]
    assert unit_cost("Node", targets) == 1
    assert unit_cost("Pair", targets) == 2
    assert unit_cost("Group", targets) == 5


def test_cap_unset_or_below_one_is_one() -> None:
    assert effective_cap(None) == effective_cap(0) == effective_cap(-3) == 1
    assert effective_cap(4) == 4


def test_a_node_waits_when_the_cap_is_full() -> None:
    assert not may_start({"a"}, ["b"], 1)
    assert may_start({"a"}, ["b"], 2)


def test_a_pair_needs_both_ends_to_fit() -> None:
    assert not may_start({"a"}, ["b", "c"], 2)
    assert may_start({"b"}, ["b", "c"], 2)  # one end already held


@given(
    busy=st.frozensets(NODE_NAMES, max_size=8),
    unit=st.lists(NODE_NAMES, min_size=1, max_size=6),
    cap=st.integers(min_value=-1, max_value=10),
)
def test_starting_a_unit_never_takes_the_run_past_its_cap(
    busy: frozenset[str], unit: list[str], cap: int
) -> None:
    if may_start(busy, unit, cap) and slots_needed(busy, unit) > 0:
        assert len(busy | set(unit)) <= effective_cap(cap)


@given(
    busy=st.frozensets(NODE_NAMES, min_size=1, max_size=10),
    data=st.data(),
    cap=st.integers(min_value=-1, max_value=3),
)
def test_a_unit_whose_nodes_are_all_busy_costs_nothing(
    busy: frozenset[str], data: st.DataObject, cap: int
) -> None:
    unit = data.draw(st.lists(st.sampled_from(sorted(busy)), min_size=1, max_size=5))
    assert slots_needed(busy, unit) == 0
    assert may_start(busy, unit, cap)  # even when a lowered cap is already exceeded


@given(
    busy=st.frozensets(NODE_NAMES, max_size=8),
    unit=st.lists(NODE_NAMES, min_size=1, max_size=6),
    cap=st.integers(min_value=1, max_value=10),
)
def test_may_start_is_exactly_whether_the_new_nodes_fit(
    busy: frozenset[str], unit: list[str], cap: int
) -> None:
    new = set(unit) - busy
    assert may_start(busy, unit, cap) == (not new or len(busy) + len(new) <= cap)
