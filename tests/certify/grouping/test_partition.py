"""Topology-aware grouping (specs/certify.md §7.3; §9.2 scenario 22) and its properties."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.backends.sim.certify.nodes import fleet_nodes
from glimmer.certify.grouping import (
    CLIQUE_LABEL,
    RACK_LABEL,
    Group,
    NodeInfo,
    domain_key,
    partition,
)
from glimmer.errors import InputError
from glimmer.fleet.load import load_topology

KEY = "rack"


def _plain(n: int) -> list[NodeInfo]:
    return [NodeInfo(f"n{i:02d}") for i in range(n)]


def _racked(sizes: list[int]) -> list[NodeInfo]:
    return [
        NodeInfo(f"r{r}-n{i:02d}", {KEY: f"r{r}"})
        for r, size in enumerate(sizes)
        for i in range(size)
    ]


def test_simple_exact_fit() -> None:
    groups = partition(_plain(8), 4)
    assert [g.name for g in groups] == ["group-0", "group-1"]
    assert groups[1].nodes == ("n04", "n05", "n06", "n07")


def test_simple_overflow_borrows_from_the_last_full_group() -> None:
    groups = partition(_plain(10), 4)
    over = groups[-1]
    assert over == Group("group-2-overflow", ("n06", "n07", "n08", "n09"), (), True, ("n06", "n07"))
    assert over.owned == ("n08", "n09")


def test_fewer_nodes_than_a_group_make_one_partial_group() -> None:
    assert partition(_plain(3), 4) == [Group("group-0", ("n00", "n01", "n02"))]


def test_single_node_jobs() -> None:
    assert [g.nodes for g in partition(_plain(3), 1)] == [("n00",), ("n01",), ("n02",)]


def test_topology_exact_fit_keeps_each_rack_whole() -> None:
    groups = partition(_racked([4, 4]), 4, KEY)
    assert [g.domains for g in groups] == [("r0",), ("r1",)]


def test_topology_multi_domain_group_takes_the_biggest_racks_first() -> None:
    groups = partition(_racked([3, 2, 3]), 4, KEY)
    assert groups[0].domains == ("r0", "r2") and len(groups[0].nodes) == 4
    assert all(len(g.nodes) == 4 for g in groups)
    assert groups[0].domain_node_counts({n.name: n.labels[KEY] for n in _racked([3, 2, 3])}) == {
        "r0": 3,
        "r2": 1,
    }


def test_topology_overflow_borrows_tested_nodes_of_the_same_rack() -> None:
    groups = partition(_racked([6]), 4, KEY)
    assert groups[-1].overflow and groups[-1].domains == ("r0",)
    assert len(groups[-1].owned) == 2 and len(groups[-1].borrowed) == 2


def test_strict_domain_gives_one_group_per_rack_at_natural_size() -> None:
    groups = partition(_racked([2, 5, 3]), 4, KEY, strict_domain=True)
    assert [len(g.nodes) for g in groups] == [5, 3, 2]
    assert [g.domains for g in groups] == [("r1",), ("r2",), ("r0",)]


def test_errors_no_nodes_zero_size_missing_labels() -> None:
    with pytest.raises(InputError, match="no nodes"):
        partition([], 2)
    with pytest.raises(InputError, match="at least 1"):
        partition(_plain(2), 0)
    with pytest.raises(InputError, match='node "n00" missing topology label "rack"'):
        partition(_plain(1), 1, KEY)
    with pytest.raises(InputError, match='"n00", "n01"'):
        partition(_plain(2), 1, KEY)


def test_fleet_labels_keep_nvlink_domains_whole() -> None:
    nodes = fleet_nodes(load_topology("ai-factory"))
    nvl = [n for n in nodes if n.name.startswith("nvl-")]
    assert domain_key(nvl) == CLIQUE_LABEL and domain_key(nodes) == RACK_LABEL
    groups = partition(nvl, 4, CLIQUE_LABEL, strict_domain=True)
    assert len(groups) == 1 and len(groups[0].nodes) == 18


# ---- properties ------------------------------------------------------------------------------

_sizes = st.lists(st.integers(min_value=1, max_value=12), min_size=1, max_size=8)


def _check_ownership(nodes: list[NodeInfo], groups: list[Group]) -> None:
    owned = Counter(n for g in groups for n in g.owned)
    assert owned == Counter(n.name for n in nodes)  # every node owned by exactly one group
    for g in groups:
        assert len(set(g.nodes)) == len(g.nodes) and list(g.nodes) == sorted(g.nodes)
        assert set(g.borrowed) <= set(g.nodes)
        assert not g.borrowed or g.overflow
        # A borrowed node is owned by some other group.
        for b in g.borrowed:
            assert any(b in h.owned for h in groups if h is not g)


@given(_sizes, st.integers(min_value=1, max_value=16))
@settings(max_examples=200)
def test_topology_groups_cover_and_size(sizes: list[int], npj: int) -> None:
    nodes = _racked(sizes)
    groups = partition(nodes, npj, KEY)
    _check_ownership(nodes, groups)
    if len(groups) == 1 and not groups[0].overflow and len(groups[0].nodes) != npj:
        # No full group could be packed from the biggest racks: one partial group of all.
        assert len(groups[0].nodes) == len(nodes)
    else:
        assert all(len(g.nodes) == npj for g in groups)


@given(_sizes, st.integers(min_value=1, max_value=16))
@settings(max_examples=200)
def test_simple_groups_cover_and_size(sizes: list[int], npj: int) -> None:
    nodes = _racked(sizes)
    groups = partition(nodes, npj)
    _check_ownership(nodes, groups)
    assert all(len(g.nodes) == min(npj, len(nodes)) for g in groups)


@given(
    st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=6),
    st.integers(min_value=1, max_value=6),
)
@settings(max_examples=200)
def test_a_rack_is_split_only_when_it_must_be(multiples: list[int], npj: int) -> None:
    # Racks whose size is a multiple of the group size never mix or split across groups.
    nodes = _racked([m * npj for m in multiples])
    for g in partition(nodes, npj, KEY):
        assert len(g.domains) == 1 and not g.overflow


@given(_sizes)
@settings(max_examples=100)
def test_strict_domain_keeps_every_rack_whole(sizes: list[int]) -> None:
    nodes = _racked(sizes)
    groups = partition(nodes, 4, KEY, strict_domain=True)
    assert sorted(len(g.nodes) for g in groups) == sorted(sizes)
    assert all(len(g.domains) == 1 for g in groups)


def test_max_domains_per_group_stops_packing_small_racks_together() -> None:
    # The biggest rack fills a group alone (max 1 domain per group): the four one-node racks
    # cannot fill one between them under that cap and go to an overflow group instead.
    groups = partition(_racked([4, 1, 1, 1, 1]), 4, KEY)
    assert groups[0] == Group("group-0", tuple(f"r0-n{i:02d}" for i in range(4)), ("r0",))
    over = groups[1]
    assert over.overflow and len(over.owned) == 4 and over.borrowed == ()
