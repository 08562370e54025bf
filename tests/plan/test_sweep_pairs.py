"""Link sweeps (plan/sweep.py): which pairs a ring and an all-pairs sweep test, in rounds where
no node appears twice."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from glimmer.plan.sweep import MAX_PAIRS, PairShape, SweepError, pairs_of


def _names(n: int) -> list[str]:
    return [f"n{i:03d}" for i in range(n)]


def _rounds(pairs: list[tuple[str, str]]) -> int:
    """How many runs of node-disjoint pairs the order splits into."""
    rounds, seen = 1, set[str]()
    for a, b in pairs:
        if a in seen or b in seen:
            rounds, seen = rounds + 1, set()
        seen |= {a, b}
    return rounds


@given(st.integers(min_value=3, max_value=60))
def test_a_ring_pairs_every_node_with_the_next_and_the_last_with_the_first(n: int) -> None:
    nodes = _names(n)
    pairs = pairs_of(nodes, PairShape.RING)
    expected = {frozenset((nodes[i], nodes[(i + 1) % n])) for i in range(n)}
    assert {frozenset(p) for p in pairs} == expected and len(pairs) == n
    assert _rounds(pairs) == (2 if n % 2 == 0 else 3)


@given(st.integers(min_value=2, max_value=40))
def test_all_pairs_tests_each_unordered_pair_once_in_rounds(n: int) -> None:
    nodes = _names(n)
    pairs = pairs_of(nodes, PairShape.ALL_PAIRS)
    assert sorted(tuple(sorted(p)) for p in pairs) == list(itertools.combinations(nodes, 2))
    assert len(pairs) == n * (n - 1) // 2
    assert _rounds(pairs) <= (n - 1 if n % 2 == 0 else n)


def test_a_ring_of_two_nodes_is_their_one_pair() -> None:
    assert pairs_of(["a", "b"], PairShape.RING) == [("a", "b")]


def test_one_node_cannot_make_a_sweep() -> None:
    with pytest.raises(SweepError, match="at least two nodes; 1 given"):
        pairs_of(["a"], PairShape.RING)


def test_an_all_pairs_sweep_too_large_for_one_sweep_is_refused_with_its_size() -> None:
    n = 317  # 50,086 pairs
    assert n * (n - 1) // 2 > MAX_PAIRS
    with pytest.raises(SweepError, match="317 nodes is 50,086 pairs"):
        pairs_of(_names(n), PairShape.ALL_PAIRS)
