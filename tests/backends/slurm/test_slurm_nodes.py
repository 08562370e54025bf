"""The slurm substrate's nodes on a real cluster: a cordon is a drain with our stamp plus a
reservation, a release gives both back, the window lets our own job start on our drained node
while keeping others' off, and a drain that is not ours is never touched."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from glimmer.backends.slurm import nodes as nodes_module
from glimmer.backends.slurm.nodes import SlurmNodes
from glimmer.backends.slurm.stamp import Stamp, decode, encode
from glimmer.engine.backend import NotFound
from glimmer.engine.keys import CORDON_OWNER, HEAT_EXPECTED, PRIOR_UNSCHEDULABLE
from tests.backends.slurm.counting_slurm import CountingSlurm
from tests.slurm_cluster import SlurmCluster

OWNER = "default/host-n1/uid-1"
STAMP = {CORDON_OWNER: OWNER, PRIOR_UNSCHEDULABLE: "false"}
WAIT = 20.0


def _nodes(cluster: SlurmCluster, tmp_path: Path) -> SlurmNodes:
    return SlurmNodes(tmp_path / "state", cluster.slurm, partition=cluster.partition)


def _job_state(cluster: SlurmCluster, job: str) -> str:
    return cluster.slurm.run("squeue", "-h", "-t", "all", "-j", job, "-o", "%T").strip()


def _wait_state(cluster: SlurmCluster, job: str, want: str) -> None:
    deadline = time.monotonic() + WAIT
    while _job_state(cluster, job) != want:
        assert time.monotonic() < deadline, f"job {job} is {_job_state(cluster, job)}, not {want}"
        time.sleep(0.1)


def _sbatch(cluster: SlurmCluster, node: str, *extra: str, seconds: float = 30) -> str:
    out = cluster.slurm.run(
        "sbatch", "--parsable", "-w", node, "-o", "/dev/null", *extra, "--wrap", f"sleep {seconds}"
    )
    return out.strip().split(";")[0]


def _cancel(cluster: SlurmCluster, *jobs: str) -> None:
    cluster.slurm.run("scancel", *jobs)
    deadline = time.monotonic() + WAIT
    while cluster.active_jobs():
        assert time.monotonic() < deadline, cluster.active_jobs()
        time.sleep(0.2)


def test_a_stamp_before_the_cordon_lives_in_the_file_and_leaves_the_node_schedulable(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = _nodes(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[0]
    stamped = nodes.update_node(node, annotations=STAMP)
    assert not stamped.unschedulable and dict(stamped.annotations) == STAMP
    assert slurm_cluster.node_state(node) == "idle" and slurm_cluster.reservations() == []
    assert nodes.get_node(node) == stamped
    released = nodes.update_node(node, unschedulable=False, annotations=dict.fromkeys(STAMP))
    assert dict(released.annotations) == {} and not released.unschedulable
    assert not (tmp_path / "state" / "nodes" / f"{node}.json").exists()


def test_a_stamp_written_ahead_of_its_cordon_asks_slurm_for_one_read_and_nothing_else(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    slurm = CountingSlurm(env=slurm_cluster.slurm.env, timeout=slurm_cluster.slurm.timeout)
    nodes = SlurmNodes(tmp_path / "state", slurm, partition=slurm_cluster.partition)
    node = slurm_cluster.nodes[2]
    stamped = nodes.update_node(node, annotations=STAMP)
    assert slurm.calls == [("scontrol", "show", "node", "-o", node)]
    assert not stamped.unschedulable and dict(stamped.annotations) == STAMP
    assert nodes.get_node(node) == stamped
    released = nodes.update_node(node, annotations=dict.fromkeys(STAMP))
    assert dict(released.annotations) == {} and slurm.asked("scontrol", "update") == []


def test_reads_close_together_share_one_call_and_a_change_makes_the_next_read_ask_again(
    slurm_cluster: SlurmCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slurm = CountingSlurm(env=slurm_cluster.slurm.env, timeout=slurm_cluster.slurm.timeout)
    nodes = SlurmNodes(tmp_path / "state", slurm, partition=slurm_cluster.partition)
    listed = nodes.list_nodes()
    views = [nodes.get_node(name) for name in slurm_cluster.nodes]  # a pass reading its targets
    assert views == listed and slurm.calls == [("scontrol", "show", "node", "-o")]
    node = slurm_cluster.nodes[3]
    stamped = nodes.update_node(node, annotations=STAMP)
    assert nodes.get_node(node) == stamped  # asked again: our own change is seen at once
    assert slurm.calls.count(("scontrol", "show", "node", "-o")) == 2
    monkeypatch.setattr(nodes_module, "SHARED_READ_S", 0.0)  # as if the sharing had passed
    assert nodes.get_node(node) == stamped
    assert slurm.calls.count(("scontrol", "show", "node", "-o")) == 3
    nodes.update_node(node, annotations=dict.fromkeys(STAMP))


def test_a_cordon_drains_the_node_with_our_stamp_and_reserves_it_and_release_gives_both_back(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = _nodes(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[1]
    nodes.update_node(node, annotations=STAMP)
    cordoned = nodes.update_node(node, unschedulable=True)
    assert cordoned.unschedulable and dict(cordoned.annotations) == STAMP
    assert slurm_cluster.node_state(node) == "drain"
    assert decode(slurm_cluster.reason(node)) == Stamp(nodes.store, STAMP)
    (reservation,) = slurm_cluster.reservations()
    assert (
        f"ReservationName={nodes.reservation(node)} " in reservation
        and f"Nodes={node} " in reservation
    )
    # Any reader — another process, this store's file gone — sees the stamp in Slurm.
    (tmp_path / "state" / "nodes" / f"{node}.json").unlink()
    fresh = nodes.get_node(node)
    assert fresh is not None and fresh.unschedulable and dict(fresh.annotations) == STAMP
    released = nodes.update_node(node, unschedulable=False, annotations=dict.fromkeys(STAMP))
    assert not released.unschedulable and dict(released.annotations) == {}
    assert slurm_cluster.reservations() == []
    slurm_cluster.wait_idle(node)


def test_a_heat_declaration_changed_under_the_cordon_rewrites_the_reason(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = _nodes(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[0]
    nodes.update_node(node, annotations=STAMP)
    nodes.update_node(node, unschedulable=True)
    heat = {HEAT_EXPECTED: f"{OWNER}/2026-12-02T00:00:00Z"}
    updated = nodes.update_node(node, annotations=heat)
    assert dict(updated.annotations) == {**STAMP, **heat} and updated.unschedulable
    assert decode(slurm_cluster.reason(node)) == Stamp(nodes.store, {**STAMP, **heat})
    nodes.update_node(node, unschedulable=False, annotations=dict.fromkeys([*STAMP, *heat]))
    slurm_cluster.wait_idle(node)
    assert slurm_cluster.reservations() == []


def test_the_window_lets_our_job_start_on_our_drained_node_and_keeps_others_off(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = _nodes(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[2]
    nodes.update_node(node, annotations=STAMP)
    nodes.update_node(node, unschedulable=True)
    other = _sbatch(slurm_cluster, node)  # someone else's job, aimed at our node
    with nodes.opened(node, OWNER) as reservation:
        assert reservation == nodes.reservation(node)
        ours = _sbatch(slurm_cluster, node, f"--reservation={reservation}")
        _wait_state(slurm_cluster, ours, "RUNNING")
        assert _job_state(slurm_cluster, other) == "PENDING"
    # Drained again at once; our job keeps running, the other still waits.
    assert slurm_cluster.node_state(node) == "drng"
    assert decode(slurm_cluster.reason(node)) == Stamp(nodes.store, STAMP)
    assert _job_state(slurm_cluster, ours) == "RUNNING"
    assert _job_state(slurm_cluster, other) == "PENDING"
    _cancel(slurm_cluster, ours, other)
    nodes.update_node(node, unschedulable=False, annotations=dict.fromkeys(STAMP))
    slurm_cluster.wait_idle(node)


def test_the_window_opens_nothing_on_a_node_that_is_not_this_run_s(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = _nodes(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[0]
    with nodes.opened(node) as reservation:
        assert reservation is None  # not cordoned at all
    nodes.update_node(node, annotations=STAMP)
    nodes.update_node(node, unschedulable=True)
    with nodes.opened(node, "default/another/uid-2") as reservation:
        assert reservation is None
        assert slurm_cluster.node_state(node) == "drain"
    nodes.update_node(node, unschedulable=False, annotations=dict.fromkeys(STAMP))
    slurm_cluster.wait_idle(node)


def test_an_administrator_s_drain_is_never_lifted_nor_rewritten(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = _nodes(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[3]
    slurm_cluster.drain(node, "bad dimm, ticket 4711")
    try:
        seen = nodes.get_node(node)
        assert seen is not None and seen.unschedulable and dict(seen.annotations) == {}
        nodes.update_node(node, unschedulable=False)
        nodes.update_node(node, annotations=STAMP)
        nodes.update_node(node, unschedulable=True)
        with nodes.opened(node) as reservation:
            assert reservation is None
        nodes.update_node(node, unschedulable=False, annotations=dict.fromkeys(STAMP))
        assert slurm_cluster.node_state(node) == "drain"
        assert slurm_cluster.reason(node) == "bad dimm, ticket 4711"
        assert slurm_cluster.reservations() == []
    finally:
        slurm_cluster.resume(node)
    slurm_cluster.wait_idle(node)


def test_another_store_s_stamp_is_its_run_s_and_is_left_drained(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = _nodes(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[1]
    theirs = {CORDON_OWNER: "lab/theirs/uid-9", PRIOR_UNSCHEDULABLE: "false"}
    slurm_cluster.drain(node, encode(Stamp("0123456789ab", theirs)))
    try:
        seen = nodes.get_node(node)
        assert seen is not None and seen.unschedulable and dict(seen.annotations) == theirs
        nodes.update_node(node, unschedulable=False)
        assert slurm_cluster.node_state(node) == "drain"
    finally:
        slurm_cluster.resume(node)
    slurm_cluster.wait_idle(node)


CRASH_IN_WINDOW = """
import os, sys
from pathlib import Path
from glimmer.backends.slurm.commands import Slurm
from glimmer.backends.slurm.nodes import SlurmNodes
nodes = SlurmNodes(Path(sys.argv[1]), Slurm(env=eval(sys.argv[3])))
window = nodes.opened(sys.argv[2])
window.__enter__()
os._exit(0)  # killed inside the window: the drain is never put back
"""


def test_a_crash_inside_the_window_reads_as_still_cordoned_and_the_next_window_heals_it(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = _nodes(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[0]
    nodes.update_node(node, annotations=STAMP)
    nodes.update_node(node, unschedulable=True)
    subprocess.run(
        [
            sys.executable,
            "-c",
            CRASH_IN_WINDOW,
            str(nodes.state_dir),
            node,
            repr(slurm_cluster.env),
        ],
        check=True,
        timeout=60,
    )
    assert slurm_cluster.node_state(node) in ("idle", "idle*")  # the drain was lifted ...
    seen = nodes.get_node(node)
    assert (
        seen is not None and seen.unschedulable and dict(seen.annotations) == STAMP
    )  # ... still ours
    assert len(slurm_cluster.reservations()) == 1  # and still reserved for us alone
    with nodes.opened(node) as reservation:
        assert reservation == nodes.reservation(node)
    assert slurm_cluster.node_state(node).rstrip("*") == "drain"  # '*': not yet pinged again
    nodes.update_node(node, unschedulable=False, annotations=dict.fromkeys(STAMP))
    slurm_cluster.wait_idle(node)


def test_nodes_are_listed_by_label_and_an_unknown_one_is_none_or_not_found(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = _nodes(slurm_cluster, tmp_path)
    listed = nodes.list_nodes()
    assert [n.name for n in listed] == list(slurm_cluster.nodes)
    first = listed[0]
    assert first.labels["kubernetes.io/hostname"] == first.name
    assert first.labels["kubernetes.io/os"] == "linux" and first.kernel and first.arch
    assert first.labels[f"slurm.glimmer.ai/partition.{slurm_cluster.partition}"] == "true"
    one = nodes.list_nodes({"kubernetes.io/hostname": first.name})
    assert [n.name for n in one] == [first.name]
    assert nodes.get_node("no-such-node") is None
    with pytest.raises(NotFound):
        nodes.update_node("no-such-node", unschedulable=True)
