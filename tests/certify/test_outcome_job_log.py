"""A finished job's log as the Job status ``outcome`` keeps it, and the path a collective takes
on a cluster read from its nodes' labels (issue 17, decision 1)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from glimmer.backends.sim.certify.nccl import path_of
from glimmer.backends.sim.certify.nodes import fleet_nodes
from glimmer.backends.sim.certify.views import NodeViews
from glimmer.certify.grouping import CLIQUE_LABEL, NodeInfo
from glimmer.certify.jobs import JobLog
from glimmer.certify.measure.bandwidth import parse_table
from glimmer.certify.outcome import (
    TEXT_LIMIT,
    capped_text,
    collective_path,
    outcome_doc,
    outcome_log,
)
from glimmer.errors import InputError
from glimmer.fleet.load import builtin_names, load_topology
from glimmer.sim.twin import FleetSim

TABLE = (
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
    "     1048576        262144     float     sum      -1    20.00   52.43   98.30      0"
    "    20.00   52.43   98.30      0\n"
)


def test_a_log_round_trips_through_its_outcome_document() -> None:
    log = JobLog("rank 0 says hi\n", 3, "boom", "network", ("n1", "n2"), 61.5)
    doc = json.loads(json.dumps(outcome_doc(log)))
    assert doc == {
        "text": "rank 0 says hi\n",
        "exitCode": 3,
        "error": "boom",
        "path": "network",
        "crashedOn": ["n1", "n2"],
        "elapsedSeconds": 61.5,
    }
    assert outcome_log(doc) == log


def test_a_short_log_is_kept_whole() -> None:
    text = "NCCL INFO chatter\n" + TABLE
    assert capped_text(text) == text


def test_a_long_log_loses_its_nccl_info_lines_first() -> None:
    chatter = "nvl-node-0001:12:12 [0] NCCL INFO Channel 00/32 : 0 1 2 3\n" * 6000
    text = "# nccl-tests header\n" + chatter + TABLE + "# Avg bus bandwidth    : 98.3\n"
    assert len(text.encode()) > TEXT_LIMIT
    kept = capped_text(text)
    assert kept == "# nccl-tests header\n" + TABLE + "# Avg bus bandwidth    : 98.3\n"
    assert parse_table(kept).peak_bus_bw() == pytest.approx(98.30)


def test_a_log_too_long_even_so_keeps_its_head_and_tail_around_a_marker() -> None:
    lines = [f"step {i} loss 1.0\n" for i in range(40_000)]
    text = "".join(lines) + "error: rank 3 died\n"
    kept = capped_text(text)
    assert len(kept.encode()) <= TEXT_LIMIT
    assert kept.startswith("step 0 loss 1.0\n") and kept.endswith("error: rank 3 died\n")
    (marker,) = [line for line in kept.splitlines() if line.startswith("# glimmer:")]
    dropped = int(marker.split()[2])
    assert dropped == len(text.encode()) - len(kept.encode()) + len(marker) + 1
    assert capped_text(kept) == kept  # frozen: cutting again changes nothing


def test_the_cap_counts_bytes_not_characters() -> None:
    text = "é" * (TEXT_LIMIT // 2 + 10) + "\n" + "ok\n"
    kept = capped_text(text, 1000)
    assert len(kept.encode()) <= 1000 and kept.endswith("ok\n")


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ("text", "status.outcome is not an object"),
        ({"exitCode": 0}, "status.outcome.text"),
        ({"text": "", "exitCode": "0"}, "status.outcome.exitCode"),
        ({"text": "", "exitCode": True}, "status.outcome.exitCode"),
        ({"text": "", "exitCode": 0, "crashedOn": "n1"}, "status.outcome.crashedOn"),
        ({"text": "", "exitCode": 0, "elapsedSeconds": "1"}, "status.outcome.elapsedSeconds"),
        ({"text": "", "exitCode": 0, "error": 1}, "status.outcome.error"),
    ],
)
def test_a_bad_outcome_names_the_job_and_the_field(doc: Any, field: str) -> None:
    with pytest.raises(InputError, match=field) as e:
        outcome_log(doc, "Job default/w-screen-0-iter-1")
    assert str(e.value).startswith("Job default/w-screen-0-iter-1")


def _node(name: str, clique: str = "") -> NodeInfo:
    return NodeInfo(name, {CLIQUE_LABEL: clique} if clique else {})


def test_the_path_rule_on_labels() -> None:
    a, b, c = _node("a", "r1.0"), _node("b", "r1.0"), _node("c", "r2.0")
    assert collective_path([_node("x")], False) == "nvlink"  # one node stays on its NVLink
    assert collective_path([a, b], True) == "nvlink"
    assert collective_path([a, b], False) == "network"
    assert collective_path([a, c], True) == "network"
    assert collective_path([a, _node("d")], True) == "network"
    assert collective_path([_node("d"), _node("e")], True) == "network"


def _groups(nodes: list[NodeInfo]) -> list[list[NodeInfo]]:
    """Single nodes, each clique whole, neighbours in name order, the whole fleet."""
    by_clique: dict[str, list[NodeInfo]] = {}
    for n in nodes:
        by_clique.setdefault(n.labels.get(CLIQUE_LABEL, ""), []).append(n)
    pairs = [nodes[i : i + 2] for i in range(0, len(nodes) - 1, 7)]
    return [[n] for n in nodes[:64]] + list(by_clique.values()) + pairs + [nodes]


@pytest.mark.parametrize("fleet", builtin_names())
def test_the_cluster_path_is_the_simulators_on_every_built_in_fleet(fleet: str) -> None:
    topo = load_topology(fleet)
    twin = FleetSim(topo)
    views = NodeViews(twin)
    nodes = sorted(fleet_nodes(topo), key=lambda n: n.name)
    for group in _groups(nodes):
        seen = [v for v in views.many(n.name for n in group) if v is not None]
        for mnnvl in (True, False):
            assert collective_path(group, mnnvl) == path_of(twin, seen, mnnvl), (
                [n.name for n in group],
                mnnvl,
            )
