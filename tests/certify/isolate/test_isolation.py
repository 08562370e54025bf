"""Adaptive fault isolation (specs/certify.md §7.4; §9.2 scenarios 23-25) over test oracles."""

from __future__ import annotations

import importlib.util
import random
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glimmer.certify.grouping import NodeInfo
from glimmer.certify.isolate import isolate
from glimmer.certify.isolate_split import Cell, confirmation_groups, mixes, screen_groups, split
from glimmer.certify.isolate_types import Outcome, Probe, Stage

KEY = "nvidia.com/gpu.clique"


def _nodes(n: int, per_domain: int | None = None) -> list[NodeInfo]:
    if per_domain is None:
        return [NodeInfo(f"n{i:03d}") for i in range(n)]
    return [NodeInfo(f"n{i:03d}", {KEY: f"d{i // per_domain}"}) for i in range(n)]


def _bad_node_oracle(bad: set[str]) -> Callable[[Probe], Outcome]:
    def oracle(p: Probe) -> Outcome:
        hit = sorted(bad.intersection(p.nodes))
        return Outcome(False, 10.0, f"busbw low with {hit}") if hit else Outcome(True, 100.0)

    return oracle


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[3] / "bench" / "isolation.py"
    spec = importlib.util.spec_from_file_location("bench_isolation", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve their module while the class is built
    spec.loader.exec_module(mod)
    return mod


def test_small_bench_finds_every_bad_node_and_accuses_no_healthy_one() -> None:
    bench = _bench()
    for screen in bench.SCREENS:
        for k in (1, 2, 4):
            for seed in range(20):
                t = bench.trial(64, k, seed, screen)
                assert t.missed == 0 and t.false == 0
                assert t.rounds <= 2 * bench.bound(64, k)


@given(st.integers(min_value=2, max_value=80), st.data())
@settings(max_examples=80, deadline=None)
def test_every_planted_bad_node_is_found_and_no_healthy_one_accused(
    n: int, data: st.DataObject
) -> None:
    k = data.draw(st.integers(min_value=0, max_value=min(5, n - 1)))
    per = data.draw(st.sampled_from([None, 4, 8, 18]))
    nodes = _nodes(n, per)
    bad = set(random.Random(n * 31 + k).sample([x.name for x in nodes], k))
    key = KEY if per else None
    # Without one clean screening group there is no healthy reference, and §7.4 then marks
    # every suspect failed (test_no_healthy_reference_marks_every_suspect_failed).
    assume(any(bad.isdisjoint(c.nodes) for c in screen_groups(nodes, key)))
    d = isolate(nodes, _bad_node_oracle(bad), topology_key=key)
    assert set(d.faulty_nodes) == bad
    assert set(d.healthy) == {x.name for x in nodes} - bad
    for t in d.history:  # no round runs two jobs on one node
        same = [h for h in d.history if h.round == t.round and h is not t]
        assert all(set(h.probe.nodes).isdisjoint(t.probe.nodes) for h in same)


def test_accusation_names_the_evidence_trail() -> None:
    d = isolate(_nodes(16), _bad_node_oracle({"n005"}), nvlink=False)
    (acc,) = d.faulty
    assert acc.node == "n005" and "busbw low" in acc.reason
    assert acc.trail[0].startswith("screen-1") and acc.trail[-1].startswith("confirm-")
    assert d.message == "Diagnosis complete: 1 faulty nodes confirmed"


def test_a_nic_fault_hidden_by_nvlink_is_found_by_the_no_nvl_retest() -> None:
    nodes = _nodes(18, 18)  # one NVL72 rack: 18 trays, one clique

    def oracle(p: Probe) -> Outcome:
        if "n007" in p.nodes and not p.nvlink and len(p.nodes) > 1:
            return Outcome(False, 90.0, "busbw 90 < 168 GB/s over the NICs")
        return Outcome(True, 680.0)

    d = isolate(nodes, oracle, topology_key=KEY)
    assert d.faulty_nodes == ["n007"]
    stages = [t.probe.stage for t in d.history]
    assert stages[0] is Stage.SCREEN and Stage.RETEST in stages
    assert all(not t.probe.nvlink for t in d.history if t.probe.stage is Stage.BISECT)


def test_a_fault_between_two_halves_is_infrastructure_not_a_node() -> None:
    def oracle(p: Probe) -> Outcome:
        if {"n001", "n003"} <= set(p.nodes):
            return Outcome(False, 1.0, "link n001<->n003 down")
        return Outcome(True, 1.0)

    d = isolate(_nodes(8, 4), oracle, topology_key=KEY, nvlink=False)
    assert d.faulty == [] and len(d.infrastructure) == 1
    fault = d.infrastructure[0]
    assert (fault.group_a, fault.group_b, fault.domain) == (("n001",), ("n003",), "d0")
    assert not set(d.healthy) & {"n001", "n003"}
    assert d.message.endswith("infrastructure faults detected")


def test_a_transient_failure_accuses_nobody() -> None:
    seen: set[str] = set()

    def oracle(p: Probe) -> Outcome:
        if p.name == "screen-0" and p.name not in seen:
            seen.add(p.name)
            return Outcome(False, 1.0, "flake")
        return Outcome(True, 1.0)

    d = isolate(_nodes(9), oracle, nvlink=False)
    assert d.faulty == [] and d.infrastructure == []
    assert len(d.healthy) == 9


def test_no_healthy_reference_marks_every_suspect_failed() -> None:
    d = isolate(_nodes(2), _bad_node_oracle({"n000", "n001"}), nvlink=False)
    assert d.faulty_nodes == ["n000", "n001"]
    assert all("no healthy node" in a.reason for a in d.faulty)


def test_healthy_fleet_is_one_round_of_screening_plus_cross_rack() -> None:
    d = isolate(_nodes(16), _bad_node_oracle(set()), nvlink=False)
    assert d.faulty == [] and d.rounds == 2 and d.message.startswith("All domains healthy")


# ---- the cuts (§9.2 scenarios 23-25) ----------------------------------------------------------


def test_screen_groups_three_cliques_and_uneven() -> None:
    nodes = (
        [NodeInfo(f"a{i}", {KEY: "c"}) for i in range(3)]
        + [NodeInfo(f"b{i}", {KEY: "a"}) for i in range(5)]
        + [NodeInfo("z", {})]
    )
    cells = screen_groups(nodes, KEY)
    assert [(c.name, c.domains, len(c.nodes)) for c in cells] == [
        ("screen-0", ("a",), 5),
        ("screen-1", ("c",), 3),
        ("screen-2", ("unknown",), 1),
    ]


def test_screen_groups_without_topology_use_sqrt_chunks() -> None:
    assert [len(c.nodes) for c in screen_groups(_nodes(12), None)] == [4, 4, 4]
    assert [len(c.nodes) for c in screen_groups(_nodes(1), None)] == [1]  # K = 2


def test_bisect_odd_split_and_by_domain() -> None:
    a, b = split(Cell("g", ("a", "b", "c", "d", "e")), {}, 1, 0)
    assert (a.name, a.nodes, b.nodes) == ("bisect-1-0a", ("a", "b"), ("c", "d", "e"))
    dom = {f"n{i}": f"r{i // 2}" for i in range(8)}
    a, b = split(Cell("g", tuple(sorted(dom))), dom, 2, 3)
    assert a.domains == ("r0", "r1") and b.domains == ("r2", "r3") and b.name == "bisect-2-3b"
    one = {f"n{i}": "r0" for i in range(4)}
    a, b = split(Cell("g", tuple(sorted(one))), one, 1, 0)
    assert a.nodes == ("n0", "n1") and b.nodes == ("n2", "n3")  # single-domain fallback


def test_cross_mixes_and_confirmation_rotation() -> None:
    got = mixes(("a", "b"), ("c", "d"), 0)
    assert [(c.name, c.nodes) for c in got] == [
        ("cross-0-mix0", ("a", "c")),
        ("cross-0-mix1", ("b", "d")),
    ]
    assert len(mixes(("a",), ("c",), 1)) == 1
    cells = confirmation_groups(["s1", "s2", "s3"], ["h1", "h2"])
    assert [c.nodes for c in cells] == [("s1", "h1"), ("s2", "h2"), ("s3", "h1")]
    assert confirmation_groups(["s1"], []) == [] and confirmation_groups([], ["h"]) == []
