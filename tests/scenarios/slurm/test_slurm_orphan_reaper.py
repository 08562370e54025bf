"""Issue 15, Tests: the orphan reaper (§2.10, §7.2). Two runs of one state directory each
drain a node, and both engines die. The state of run A is deleted (its jobs cancelled, its run
file removed); starting run B again runs the reaper first: A's node is resumed, while B — alive
in the store — keeps its drain until B itself finishes and releases it."""

from __future__ import annotations

import json
from pathlib import Path

from slurm_scenario import (
    RUN_TIMEOUT_S,
    Ran,
    host_health,
    profile_file,
    stamps,
    start_glimmer,
    wait_for,
)

from glimmer.contract.vocab import Phase
from tests.slurm_cluster import SlurmCluster


def _owned_by(cluster: SlurmCluster, node: str, run: str) -> bool:
    return f"/{run}/" in stamps(cluster).get(node, "")


def _running(cluster: SlurmCluster, name: str, node: str) -> bool:
    out = cluster.slurm.run("squeue", "-h", "-t", "running", "-o", "%j|%N")
    return any(
        job.startswith(f"{name}-slurm-") and where == node
        for job, _, where in (line.partition("|") for line in out.splitlines())
    )


def _started_and_killed(
    cluster: SlurmCluster, state: Path, profile: Path, name: str, node: str
) -> str:
    """Start a run of profile ``name`` on ``node``, wait until it has drained it and its job
    runs there, SIGKILL the engine; the run's name. (Killed while its job runs, not inside the
    short window in which the node is resumed for the submit: that case is the kill scenario's.)"""
    engine = start_glimmer(cluster, state, [profile], [node], 1)
    try:
        wait_for(f"{node} drained by our stamp", lambda: node in stamps(cluster), 60)
        wait_for(f"a job of {name} running on {node}", lambda: _running(cluster, name, node), 60)
        wait_for(f"{node} drained again", lambda: node in stamps(cluster), 30)
    finally:
        engine.kill()
        engine.communicate(timeout=30)
    [run_file] = [p for p in (state / "runs").rglob(f"{name}-slurm-*.json")]
    return run_file.stem


def test_the_reaper_resumes_the_node_of_a_deleted_run_and_leaves_a_live_runs_drain(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    gone_node, live_node = slurm_cluster.nodes[:2]
    state = tmp_path / "state"
    # A would run for a minute; B ends shortly after it is started again.
    gone_profile = profile_file(tmp_path / "a.yaml", "reap-a", [host_health("long", 60)])
    live_profile = profile_file(tmp_path / "b.yaml", "reap-b", [host_health("short", 6)])
    gone = _started_and_killed(slurm_cluster, state, gone_profile, "reap-a", gone_node)
    live = _started_and_killed(slurm_cluster, state, live_profile, "reap-b", live_node)
    assert _owned_by(slurm_cluster, gone_node, gone) and _owned_by(slurm_cluster, live_node, live)

    # Delete A: its jobs (by the run uid each carries as its comment), then its run file.
    gone_file = next((state / "runs").rglob(f"{gone}.json"))
    uid = json.loads(gone_file.read_text())["metadata"]["uid"]
    out = slurm_cluster.slurm.run("squeue", "-h", "-o", "%i|%k")
    for line in out.splitlines():
        job, _, comment = line.partition("|")
        if comment.strip() == uid:
            slurm_cluster.slurm.run("scancel", job)
    gone_file.unlink()

    engine = start_glimmer(slurm_cluster, state, [live_profile], [live_node], 1)
    try:
        wait_for(f"{gone_node} resumed", lambda: gone_node not in stamps(slurm_cluster), 60)
        # The moment A's node is given back, B's drain is still B's.
        assert _owned_by(slurm_cluster, live_node, live)
        out, err = engine.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.communicate(timeout=30)
    ran = Ran(engine.returncode, out, err)
    assert ran.code == 0, out + err
    assert ran.run.status is not None and ran.run.status.phase is Phase.PASSED
    slurm_cluster.wait_idle(gone_node)
    assert slurm_cluster.reason(gone_node) == ""
    assert stamps(slurm_cluster) == {}
