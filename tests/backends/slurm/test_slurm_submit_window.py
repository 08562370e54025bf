"""One submit window for everything a pass creates (backends/slurm/job_submit.py, pass_batch.py),
on the real cluster: executions queued on several drained nodes go out in one window (one
resume, one drain per stamp, each node drained again with its own stamp), a held execution
reads as pending and one deleted while held is never submitted, and the backend holds creates
only while an engine pass is under way."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from glimmer.backends.common.clock import HostClock
from glimmer.backends.slurm.backend import SlurmBackend
from glimmer.backends.slurm.job_submit import rounds
from glimmer.backends.slurm.jobs import SlurmJobs
from glimmer.backends.slurm.nodes import SlurmNodes
from glimmer.backends.slurm.stamp import Stamp, decode
from glimmer.engine.backend import ExecPhase, Execution
from glimmer.engine.keys import CORDON_OWNER, HEAT_EXPECTED, PRIOR_UNSCHEDULABLE
from tests.backends.slurm.counting_slurm import CountingSlurm
from tests.backends.slurm.slurm_job_specs import NAMESPACE, RUN, UID, n, spec
from tests.slurm_cluster import SlurmCluster

OWNER = f"{NAMESPACE}/{RUN}/{UID}"
STAMP = {CORDON_OWNER: OWNER, PRIOR_UNSCHEDULABLE: "false"}
HEAT = {HEAT_EXPECTED: f"{OWNER}/2026-12-02T00:00:00Z"}
WAIT = 30.0


@pytest.fixture
def slurm(slurm_cluster: SlurmCluster) -> CountingSlurm:
    return CountingSlurm(env=slurm_cluster.slurm.env, timeout=slurm_cluster.slurm.timeout)


@pytest.fixture
def nodes(slurm: CountingSlurm, tmp_path: Path) -> SlurmNodes:
    return SlurmNodes(tmp_path / "state", slurm)


@pytest.fixture
def jobs(slurm: CountingSlurm, nodes: SlurmNodes, tmp_path: Path) -> Iterator[SlurmJobs]:
    made = SlurmJobs(
        tmp_path / "state",
        slurm,
        HostClock(),
        runner_command=("/bin/false",),
        partition=None,
        doors=nodes,
    )
    yield made
    made.delete_owned(NAMESPACE, RUN, UID)


def _cordon(nodes: SlurmNodes, node: str, stamp: dict[str, str]) -> None:
    nodes.update_node(node, annotations=stamp)
    nodes.update_node(node, unschedulable=True)


def _release(cluster: SlurmCluster, nodes: SlurmNodes, node: str) -> None:
    nodes.update_node(node, unschedulable=False, annotations=dict.fromkeys([*STAMP, *HEAT]))
    cluster.wait_idle(node)


def _seen(jobs: SlurmJobs, name: str) -> Callable[[], Execution | None]:
    return lambda: jobs.executions(NAMESPACE, RUN, UID).get(name)


def _until(found: Callable[[], Execution | None], done: Callable[[Execution], bool]) -> Execution:
    deadline = time.monotonic() + WAIT
    while True:
        seen = found()
        if seen is not None and done(seen):
            return seen
        assert time.monotonic() < deadline, f"never got there: {seen}"
        time.sleep(0.2)


def test_executions_queued_on_several_drained_nodes_go_out_in_one_window(
    slurm_cluster: SlurmCluster, nodes: SlurmNodes, jobs: SlurmJobs, slurm: CountingSlurm
) -> None:
    first, second = slurm_cluster.nodes[:2]
    _cordon(nodes, first, STAMP)
    _cordon(nodes, second, {**STAMP, **HEAT})  # another stamp: drained again with its own
    try:
        for node in (first, second):
            jobs.queue(spec(f"batch-{node}", node, "sleep 2; hostname"))
        held = jobs.executions(NAMESPACE, RUN, UID)
        assert sorted(e.name for e in held) == sorted(n(f"batch-{x}") for x in (first, second))
        assert all(e.phase is ExecPhase.PENDING for e in held)  # held: as good as submitted
        assert slurm.asked("sbatch") == []
        slurm.calls.clear()
        jobs.flush()
        both = f"nodename={first},{second}"
        assert slurm.asked("scontrol", "update", both, "state=resume") == [
            ("scontrol", "update", both, "state=resume")
        ]
        assert len(slurm.asked("sbatch")) == 2
        drains = slurm.asked("scontrol", "update")[1:]  # after the one resume: one per stamp
        assert sorted(c[2] for c in drains) == [f"nodename={first}", f"nodename={second}"]
        assert decode(slurm_cluster.reason(first)) == Stamp(nodes.store, STAMP)
        assert decode(slurm_cluster.reason(second)) == Stamp(nodes.store, {**STAMP, **HEAT})
        for node in (first, second):
            name = n(f"batch-{node}")
            ended = _until(_seen(jobs, name), lambda e: e.phase.terminated)
            assert ended.phase is ExecPhase.SUCCEEDED
            assert jobs.read_log(NAMESPACE, name).strip() == node
        jobs.flush()  # nothing held: nothing asked of Slurm
        assert jobs.queued() == []
    finally:
        jobs.delete_owned(NAMESPACE, RUN, UID)
        for node in (first, second):
            _release(slurm_cluster, nodes, node)


def test_an_execution_deleted_while_held_is_never_submitted(
    slurm_cluster: SlurmCluster, jobs: SlurmJobs, slurm: CountingSlurm
) -> None:
    jobs.queue(spec("dropped", slurm_cluster.nodes[2], "sleep 30"))
    jobs.delete_execution(NAMESPACE, n("dropped"))
    jobs.flush()
    assert slurm.asked("sbatch") == []
    assert jobs.executions(NAMESPACE, RUN, UID).get(n("dropped")) is None


def test_the_backend_holds_creates_only_while_a_pass_is_under_way(
    slurm_cluster: SlurmCluster, slurm: CountingSlurm, tmp_path: Path
) -> None:
    backend = SlurmBackend(tmp_path / "state", slurm, runner_command=[sys.executable, "-c", ""])
    node_a, node_b, node_c = slurm_cluster.nodes[:3]
    try:
        backend.create_execution(spec("outside", node_a, "true"))  # no pass: out at once
        assert len(slurm.asked("sbatch")) == 1
        assert backend.get_run(NAMESPACE, "no-such-run") is None  # a pass begins so
        backend.create_execution(spec("held-1", node_b, "true"))
        backend.create_execution(spec("held-2", node_c, "true"))
        assert len(slurm.asked("sbatch")) == 1  # held for the pass's window
        seen = backend.executions(NAMESPACE, RUN, UID)  # read as pending, not submitted yet
        assert {e.name: e.phase for e in seen if e.name != n("outside")} == {
            n("held-1"): ExecPhase.PENDING,
            n("held-2"): ExecPhase.PENDING,
        }
        assert len(slurm.asked("sbatch")) == 1
        assert backend.get_run(NAMESPACE, "no-such-run") is None  # the next pass: both go out
        assert len(slurm.asked("sbatch")) == 3
        backend.create_execution(spec("held-3", node_a, "true"))  # in the pass just begun
        assert len(slurm.asked("sbatch")) == 3
        backend.update_node(node_a, annotations={})  # its node changes: it goes out first
        assert len(slurm.asked("sbatch")) == 4
        backend.create_execution(spec("after", node_b, "true"))  # that pass is done creating
        assert len(slurm.asked("sbatch")) == 5
    finally:
        backend.jobs.delete_owned(NAMESPACE, RUN, UID)


def test_a_window_holds_each_node_once_and_a_second_job_there_waits_for_the_next() -> None:
    items = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5)]
    assert rounds(items, lambda item: item[0]) == [
        [("a", 1), ("b", 2), ("c", 4)],
        [("a", 3)],
        [("a", 5)],
    ]
