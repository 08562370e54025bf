"""Issue 15, Tests: a node an administrator drained before the run is refused at start with
its reason, and is still drained with that reason afterwards; nothing was submitted and no
other node was touched (as a node cordoned by someone else is, §2.10)."""

from __future__ import annotations

from pathlib import Path

from slurm_scenario import glimmer_run, host_health, job_names, profile_file, stamps

from tests.slurm_cluster import SlurmCluster

REASON = "fan tray replaced, awaiting vendor check"


def test_a_node_drained_by_an_administrator_is_refused_at_start_with_its_reason_and_stays_drained(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = slurm_cluster.nodes[:4]
    drained = nodes[2]
    profile = profile_file(tmp_path / "host.yaml", "host-admin", [host_health()])
    before = set(job_names(slurm_cluster))
    slurm_cluster.drain(drained, REASON)
    try:
        ran = glimmer_run(slurm_cluster, tmp_path / "state", [profile], nodes, 2)
        assert ran.code != 0, ran.stdout + ran.stderr
        said = ran.stdout + ran.stderr
        assert drained in said and REASON in said, said
        assert slurm_cluster.node_state(drained) == "drain"
        assert slurm_cluster.reason(drained) == REASON
        assert stamps(slurm_cluster) == {}
        assert set(job_names(slurm_cluster)) == before  # refused before anything was submitted
        assert all(slurm_cluster.node_state(n) == "idle" for n in nodes if n != drained)
    finally:
        slurm_cluster.resume(drained)
    slurm_cluster.wait_idle(drained)
