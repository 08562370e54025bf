"""The orphan reaper on a real cluster: a drain whose run is gone (name AND uid, read fresh) is
resumed and its reservation deleted; a live run's drain is untouched; a stamp it cannot read,
another store's and an administrator's drain are left alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from glimmer.api.run import BurnInRun
from glimmer.backends.common.run_store import FileRunStore
from glimmer.backends.slurm.nodes import SlurmNodes
from glimmer.backends.slurm.reaper import LEFT_DRAINED, REDRAINED, RESUMED, UNRESERVED, reap
from glimmer.backends.slurm.stamp import Stamp, decode, encode
from glimmer.engine.keys import CORDON_OWNER, HEAT_EXPECTED, PRIOR_UNSCHEDULABLE
from tests.slurm_cluster import SlurmCluster


def _run(name: str, uid: str) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": "default", "uid": uid},
            "spec": {"profileRef": "host", "target": {"nodeNames": ["n1"]}},
        }
    )


def _world(cluster: SlurmCluster, tmp_path: Path) -> tuple[SlurmNodes, FileRunStore]:
    state = tmp_path / "state"
    return SlurmNodes(state, cluster.slurm, partition=cluster.partition), FileRunStore(
        state / "runs"
    )


def _cordon(nodes: SlurmNodes, node: str, owner: str, prior: str = "false") -> None:
    nodes.update_node(node, annotations={CORDON_OWNER: owner, PRIOR_UNSCHEDULABLE: prior})
    nodes.update_node(node, unschedulable=True)


def test_a_drain_whose_run_is_gone_is_resumed_and_a_live_run_s_is_untouched(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes, store = _world(slurm_cluster, tmp_path)
    dead, live = slurm_cluster.nodes[0], slurm_cluster.nodes[1]
    store.create_run(_run("live", "uid-live"))
    _cordon(nodes, live, "default/live/uid-live")
    _cordon(nodes, dead, "default/deleted/uid-gone")
    nodes.update_node(
        dead, annotations={HEAT_EXPECTED: "default/deleted/uid-gone/2026-12-02T00:00:00Z"}
    )
    reaped = reap(nodes, store)
    assert [(r.node, r.owner, r.action) for r in reaped] == [
        (dead, "default/deleted/uid-gone", RESUMED)
    ]
    slurm_cluster.wait_idle(dead)
    after = nodes.get_node(dead)
    assert after is not None and not after.unschedulable and dict(after.annotations) == {}
    assert slurm_cluster.node_state(live) == "drain"
    assert decode(slurm_cluster.reason(live)) == Stamp(
        nodes.store, {CORDON_OWNER: "default/live/uid-live", PRIOR_UNSCHEDULABLE: "false"}
    )
    assert [r.split()[0] for r in slurm_cluster.reservations()] == [
        f"ReservationName={nodes.reservation(live)}"
    ]
    # The live run ends and is deleted: now its drain is an orphan too.
    store.delete_run("default", "live")
    assert [r.action for r in reap(nodes, store)] == [RESUMED]
    slurm_cluster.wait_idle(live)
    assert slurm_cluster.reservations() == []


def test_a_run_recreated_under_its_name_with_a_new_uid_does_not_keep_the_old_one_s_drain(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes, store = _world(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[2]
    store.create_run(_run("again", "uid-new"))
    _cordon(nodes, node, "default/again/uid-old")
    assert [r.action for r in reap(nodes, store)] == [RESUMED]
    slurm_cluster.wait_idle(node)


def test_a_node_drained_before_its_run_is_left_drained_and_unstamped(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes, store = _world(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[3]
    _cordon(nodes, node, "default/gone/uid-1", prior="true")
    assert [r.action for r in reap(nodes, store)] == [LEFT_DRAINED]
    assert slurm_cluster.node_state(node) == "drain"
    seen = nodes.get_node(node)
    assert seen is not None and seen.unschedulable and dict(seen.annotations) == {}
    assert reap(nodes, store) == []  # nothing of a run's is left to reap
    assert slurm_cluster.reservations() == []
    slurm_cluster.resume(node)
    slurm_cluster.wait_idle(node)


def test_a_stamp_it_cannot_read_another_store_s_and_an_administrator_s_drain_are_left_alone(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes, store = _world(slurm_cluster, tmp_path)
    mangled, theirs, admin = slurm_cluster.nodes[:3]
    _cordon(nodes, mangled, "not-an-owner")
    slurm_cluster.drain(theirs, encode(Stamp("0123456789ab", {CORDON_OWNER: "default/x/uid-x"})))
    slurm_cluster.drain(admin, "psu replaced, burn-in pending")
    try:
        assert reap(nodes, store) == []
        assert [slurm_cluster.node_state(n) for n in (mangled, theirs, admin)] == ["drain"] * 3
        assert slurm_cluster.reason(admin) == "psu replaced, burn-in pending"
    finally:
        nodes.update_node(mangled, unschedulable=False, annotations={CORDON_OWNER: None})
        slurm_cluster.resume(theirs)
        slurm_cluster.resume(admin)
    for node in (mangled, theirs, admin):
        slurm_cluster.wait_idle(node)


def test_a_reservation_of_this_store_that_no_run_claims_is_deleted(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes, store = _world(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[0]
    _cordon(nodes, node, "default/gone/uid-1")
    (nodes.root / f"{node}.json").unlink()  # the file lost ...
    slurm_cluster.resume(node)  # ... and the drain lifted by hand: only the reservation is left
    assert [(r.node, r.action) for r in reap(nodes, store)] == [(node, UNRESERVED)]
    assert slurm_cluster.reservations() == []
    slurm_cluster.wait_idle(node)


OPEN_AND_DIE = """
import os, sys
from pathlib import Path
from glimmer.backends.slurm.commands import Slurm
from glimmer.backends.slurm.nodes import SlurmNodes
window = SlurmNodes(Path(sys.argv[1]), Slurm(env=eval(sys.argv[3]))).opened(sys.argv[2])
window.__enter__()  # held, so the window is not closed when it would be collected
os._exit(0)  # killed inside the submit window: the drain is never put back
"""


def test_a_live_run_s_window_left_open_by_a_crash_is_drained_again(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes, store = _world(slurm_cluster, tmp_path)
    node = slurm_cluster.nodes[1]
    store.create_run(_run("live", "uid-live"))
    _cordon(nodes, node, "default/live/uid-live")
    argv = [sys.executable, "-c", OPEN_AND_DIE, str(nodes.state_dir), node]
    subprocess.run([*argv, repr(slurm_cluster.env)], check=True, timeout=60)
    assert not slurm_cluster.node_state(node).startswith("drain")
    assert [(r.node, r.action) for r in reap(nodes, store)] == [(node, REDRAINED)]
    assert slurm_cluster.node_state(node).rstrip("*") == "drain"
    assert decode(slurm_cluster.reason(node)) == Stamp(
        nodes.store, {CORDON_OWNER: "default/live/uid-live", PRIOR_UNSCHEDULABLE: "false"}
    )
    nodes.update_node(node, unschedulable=False, annotations={CORDON_OWNER: None})
    slurm_cluster.wait_idle(node)
