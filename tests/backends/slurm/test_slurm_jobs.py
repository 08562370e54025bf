"""Executions as Slurm batch jobs (backends/slurm/jobs.py) against the real cluster
(tests/slurm_cluster.py): a job per execution on its node with its environment, the runner's
exit codes carried exactly, one submission however often it is created (also after a crash
between sbatch and the record), cancelled and vanished jobs Failed, readiness through exec and
tcpSocket probes run on the node, one squeue call per pass, logs, deletion, the node's window
for a drained node, and the rendezvous address as the peer node's hostname."""

from __future__ import annotations

import dataclasses
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from glimmer.backends.common.clock import HostClock
from glimmer.backends.common.files import read_json, write_json
from glimmer.backends.common.specs import spec_to_json
from glimmer.backends.slurm import jobs as jobs_module
from glimmer.backends.slurm.commands import Slurm
from glimmer.backends.slurm.jobs import SlurmJobs, refusal, role_node
from glimmer.engine.backend import ExecPhase, Execution, LogUnavailable, Seat
from tests.backends.slurm.slurm_job_specs import NAMESPACE, OTHER_UID, RUN, UID, n, spec
from tests.slurm_cluster import SlurmCluster

WAIT = 30.0


class FastClock(HostClock):
    """Ten engine seconds to a host second (as the engine's tests drive real processes)."""

    def host_seconds(self, seconds: float) -> float:
        return seconds / 10


@dataclasses.dataclass(frozen=True)
class CountingSlurm(Slurm):
    """The cluster's Slurm, keeping every command it was asked to run."""

    calls: list[tuple[str, ...]] = dataclasses.field(default_factory=list)

    def call(self, *argv: str, input: str | None = None, check: bool = True) -> Any:
        self.calls.append(argv)
        return super().call(*argv, input=input, check=check)


def _jobs(cluster: SlurmCluster, state: Path, **options: Any) -> SlurmJobs:
    slurm = CountingSlurm(env=cluster.slurm.env, timeout=cluster.slurm.timeout)
    return SlurmJobs(
        state,
        slurm,
        HostClock(),
        runner_command=options.pop("runner_command", ("/bin/false",)),  # specs name their own
        partition=cluster.partition,
        **options,
    )


@pytest.fixture
def jobs(slurm_cluster: SlurmCluster, tmp_path: Path) -> Iterator[SlurmJobs]:
    """Executions under a state dir on the shared filesystem; whatever a test left running is
    deleted before the cluster fixture checks the cluster clean."""
    made = _jobs(slurm_cluster, tmp_path / "state")
    yield made
    for uid in (UID, OTHER_UID):
        made.delete_owned(NAMESPACE, RUN, uid)


def _calls(jobs: SlurmJobs) -> list[tuple[str, ...]]:
    assert isinstance(jobs.slurm, CountingSlurm)
    return jobs.slurm.calls


def _until(
    jobs: SlurmJobs, name: str, done: Callable[[Execution], bool], uid: str = UID
) -> Execution:
    until = time.monotonic() + WAIT
    while True:
        found = jobs.executions(NAMESPACE, RUN, uid).get(name)
        if found is not None and done(found):
            return found
        if time.monotonic() > until:
            raise AssertionError(f"{name} never got there: {found}")
        time.sleep(0.2)


def _ended(jobs: SlurmJobs, name: str) -> Execution:
    return _until(jobs, name, lambda e: e.phase.terminated)


def _running(jobs: SlurmJobs, name: str) -> Execution:
    return _until(jobs, name, lambda e: e.phase is ExecPhase.RUNNING)


def _jobs_named(cluster: SlurmCluster, name: str) -> list[str]:
    out = cluster.slurm.run("squeue", "-h", "-t", "all", "-n", name, "-o", "%i")
    return out.split()


def test_each_execution_is_a_job_on_its_node_with_its_environment(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    awkward = 'it\'s a "value" with $HOME and\na newline'
    for node in slurm_cluster.nodes[:2]:
        jobs.create_execution(
            spec(
                f"env-{node}",
                node,
                'echo "host=$(hostname)"; printenv AWKWARD',
                env=(("AWKWARD", awkward),),
            )
        )
    for node in slurm_cluster.nodes[:2]:
        ended = _ended(jobs, n(f"env-{node}"))
        assert ended.phase is ExecPhase.SUCCEEDED and ended.exit_code == 0
        assert ended.started_at is not None and ended.finished_at is not None
        log = jobs.read_log(NAMESPACE, n(f"env-{node}"))
        assert log.splitlines()[0] == f"host={node}"
        assert log.split("\n", 1)[1] == awkward + "\n"
        (job_id,) = _jobs_named(slurm_cluster, n(f"env-{node}"))
        shown = slurm_cluster.slurm.run("scontrol", "show", "job", "-o", job_id)
        assert f"Comment={UID}" in shown and f"NodeList={node}" in shown


def test_the_installed_runner_runs_the_kind_on_its_node(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    runner = str(Path(sys.executable).parent / "glimmer-runner")  # the nodes share this install
    jobs = _jobs(slurm_cluster, tmp_path / "state", runner_command=(runner,))
    node = slurm_cluster.nodes[1]
    asked = spec("installed", node, "unused", env=(("BURNIN_DURATION_SECONDS", "1"),))
    asked = dataclasses.replace(asked, command=())  # no command of its own: glimmer-runner <kind>
    try:
        jobs.create_execution(asked)
        ended = _ended(jobs, n("installed"))
        assert ended.exit_code in (0, 1, 2, 3)  # a verdict of the runner's own, whichever
        assert "host_health_stage=done" in jobs.read_log(NAMESPACE, n("installed"))
        assert jobs.argv(asked) == [runner, "host-health"]
    finally:
        jobs.delete_owned(NAMESPACE, RUN, UID)


def test_the_runners_exit_codes_0_to_3_are_carried_exactly(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    for code, node in enumerate(slurm_cluster.nodes[:4]):
        jobs.create_execution(spec(f"exit-{code}", node, f"exit {code}"))
    for code in range(4):
        ended = _ended(jobs, n(f"exit-{code}"))
        assert ended.exit_code == code
        assert ended.phase is (ExecPhase.SUCCEEDED if code == 0 else ExecPhase.FAILED)
        assert ended.reason == ""  # the runner's own verdict, no pod-level account


def test_creating_an_execution_twice_submits_one_job(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    node = slurm_cluster.nodes[0]
    jobs.create_execution(spec("twice", node, "sleep 30"))
    jobs.create_execution(spec("twice", node, "sleep 30"))
    fresh = _jobs(slurm_cluster, jobs.root.parent)  # a resumed engine: nothing in memory
    fresh.create_execution(spec("twice", node, "sleep 30"))
    assert len(_jobs_named(slurm_cluster, n("twice"))) == 1


def test_another_state_directorys_job_of_the_same_name_is_not_taken_for_ours(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    node = slurm_cluster.nodes[0]
    elsewhere = _jobs(slurm_cluster, tmp_path / "elsewhere")  # a copy of the state, a test
    try:
        elsewhere.create_execution(spec("same", node, "exit 3"))
        assert _ended(elsewhere, n("same")).exit_code == 3
        jobs.create_execution(spec("same", node, "exit 0"))  # ours is submitted, not adopted
        assert _ended(jobs, n("same")).exit_code == 0
        assert len(_jobs_named(slurm_cluster, n("same"))) == 2
    finally:
        elsewhere.delete_owned(NAMESPACE, RUN, UID)


def test_a_state_directory_reached_by_another_path_still_sees_its_jobs(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    jobs.create_execution(spec("aliased", slurm_cluster.nodes[0], "sleep 30"))
    _running(jobs, n("aliased"))
    alias = tmp_path / "alias"
    alias.symlink_to(jobs.root.parent)
    seen = _jobs(slurm_cluster, alias).executions(NAMESPACE, RUN, UID).get(n("aliased"))
    assert seen is not None and seen.phase is ExecPhase.RUNNING  # not vanished


def test_a_crash_between_sbatch_and_the_record_is_found_by_name(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    node = slurm_cluster.nodes[0]
    jobs.create_execution(spec("crashed", node, "sleep 30"))
    files = jobs.files(NAMESPACE, RUN, n("crashed"))
    record = read_json(files.record)
    (job_id,) = _jobs_named(slurm_cluster, n("crashed"))
    assert record["job_id"] == job_id
    write_json(files.record, {k: v for k, v in record.items() if k != "job_id"})  # the crash
    fresh = _jobs(slurm_cluster, jobs.root.parent)
    assert fresh.executions(NAMESPACE, RUN, UID).get(n("crashed")) is not None  # seen by name
    fresh.create_execution(spec("crashed", node, "sleep 30"))
    assert _jobs_named(slurm_cluster, n("crashed")) == [job_id]
    assert read_json(files.record)["job_id"] == job_id  # and adopted


def test_an_intent_nothing_was_submitted_for_reads_as_absent_and_is_submitted_once(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    asked = spec("intent", slurm_cluster.nodes[0], "exit 0")
    files = jobs.files(NAMESPACE, RUN, n("intent"))
    write_json(
        files.record, {"spec": spec_to_json(asked), "created_at": datetime.now(UTC).isoformat()}
    )
    assert jobs.executions(NAMESPACE, RUN, UID).get(n("intent")) is None
    jobs.create_execution(asked)
    assert _ended(jobs, n("intent")).phase is ExecPhase.SUCCEEDED
    assert len(_jobs_named(slurm_cluster, n("intent"))) == 1


def test_an_sbatch_a_killed_engine_may_still_have_running_is_not_doubled(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    asked = spec("inflight", slurm_cluster.nodes[0], "exit 0")
    files = jobs.files(NAMESPACE, RUN, n("inflight"))
    record = {"spec": spec_to_json(asked), "created_at": datetime.now(UTC).isoformat()}
    # The engine died during sbatch, an instant ago: its sbatch may still be on its way.
    write_json(files.record, {**record, "submitting": datetime.now(UTC).isoformat()})
    jobs.create_execution(asked)
    assert _jobs_named(slurm_cluster, n("inflight")) == []
    # Long enough ago that any sbatch it started has ended: none landed, so submit it now.
    long_ago = datetime.now(UTC) - timedelta(seconds=jobs.slurm.timeout + 60)
    write_json(files.record, {**record, "submitting": long_ago.isoformat()})
    jobs.create_execution(asked)
    assert _ended(jobs, n("inflight")).phase is ExecPhase.SUCCEEDED
    assert len(_jobs_named(slurm_cluster, n("inflight"))) == 1


def test_a_cancelled_job_is_failed_not_succeeded(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    jobs.create_execution(spec("cancelled", slurm_cluster.nodes[1], "sleep 60"))
    _running(jobs, n("cancelled"))
    (job_id,) = _jobs_named(slurm_cluster, n("cancelled"))
    slurm_cluster.slurm.run("scancel", job_id)  # an administrator, not glimmer
    ended = _ended(jobs, n("cancelled"))
    assert ended.phase is ExecPhase.FAILED
    assert ended.reason == "Cancelled"
    assert ended.exit_code != 0


def test_a_job_slurm_no_longer_knows_is_failed_as_vanished_and_stays_so(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    asked = spec("vanished", slurm_cluster.nodes[0], "exit 0")
    files = jobs.files(NAMESPACE, RUN, n("vanished"))
    created = datetime.now(UTC).isoformat()
    # A job id this cluster never had: past MinJobAge, or a controller that lost its state.
    record = {"spec": spec_to_json(asked), "created_at": created, "job_id": "99999999"}
    write_json(files.record, record)
    seen = jobs.executions(NAMESPACE, RUN, UID).get(n("vanished"))
    assert seen is not None and seen.phase is ExecPhase.FAILED
    assert seen.reason == "Vanished" and seen.exit_code == -1
    _calls(jobs).clear()
    again = jobs.executions(NAMESPACE, RUN, UID).get(n("vanished"))
    assert again == seen  # the end was recorded: every later read agrees
    assert _calls(jobs) == []  # and asks Slurm nothing


def test_the_watchdog_ends_a_job_past_its_deadline_as_deadline_exceeded(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    jobs.create_execution(spec("late", slurm_cluster.nodes[2], "sleep 60", deadline=2))
    ended = _ended(jobs, n("late"))
    assert ended.phase is ExecPhase.FAILED
    assert ended.reason == "DeadlineExceeded"


def test_the_deadline_is_enforced_in_host_seconds_of_the_substrates_clock(tmp_path: Path) -> None:
    jobs = SlurmJobs(
        tmp_path, Slurm(), FastClock(), runner_command=("glimmer-runner",), partition=None
    )
    assert jobs.job(spec("fast", "n1", "true", deadline=125)).deadline_seconds == 13


def test_an_exec_probe_run_on_the_node_makes_the_execution_ready(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    flag = tmp_path / "serving"
    probe = {"exec": {"command": ["/bin/sh", "-c", f"test -e {flag}"]}, "periodSeconds": 1}
    jobs.create_execution(spec("probed", slurm_cluster.nodes[1], "sleep 60", probe=probe))
    running = _running(jobs, n("probed"))
    assert not running.ready  # running, but its probe has not passed
    flag.touch()
    ready = _until(jobs, n("probed"), lambda e: e.ready)
    assert ready.phase is ExecPhase.RUNNING


def test_a_tcp_socket_probe_connects_on_the_node(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    flag = tmp_path / "listen-now"
    port = 18555
    server = (
        "import os, socket, time\n"
        f"while not os.path.exists({str(flag)!r}): time.sleep(0.1)\n"
        "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        f"s.bind(('0.0.0.0', {port})); s.listen(); time.sleep(60)\n"
    )
    script = f"exec {sys.executable} -c {_sh(server)}"
    probe = {"tcpSocket": {"port": port}, "periodSeconds": 1}
    jobs.create_execution(spec("tcp", slurm_cluster.nodes[2], script, probe=probe))
    assert not _running(jobs, n("tcp")).ready
    flag.touch()
    assert _until(jobs, n("tcp"), lambda e: e.ready).phase is ExecPhase.RUNNING


def test_a_probe_slurm_cannot_run_is_an_error_attempt_with_no_job(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    probe = {"httpGet": {"path": "/", "port": 80}}
    jobs.create_execution(spec("http", slurm_cluster.nodes[0], "sleep 60", probe=probe))
    seen = jobs.executions(NAMESPACE, RUN, UID).get(n("http"))
    assert seen is not None and seen.phase is ExecPhase.FAILED and seen.exit_code == -1
    assert seen.container_reason == "ProbeUnsupported" and "httpGet" in seen.container_message
    assert _jobs_named(slurm_cluster, n("http")) == []


def test_a_pass_over_many_executions_asks_squeue_in_bounded_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fake squeue that knows no job: no cluster needed to count the calls.
    (tmp_path / "squeue").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "squeue").chmod(0o755)
    monkeypatch.setattr(jobs_module, "NAMES_PER_CALL", 2)
    slurm = CountingSlurm(bin_dir=str(tmp_path))
    jobs = SlurmJobs(tmp_path / "state", slurm, HostClock(), runner_command=("x",), partition=None)
    for i in range(5):
        asked = spec(f"many-{i}", "n1", "true")
        record = {"spec": spec_to_json(asked), "created_at": datetime.now(UTC).isoformat()}
        write_json(jobs.files(NAMESPACE, RUN, asked.name).record, {**record, "job_id": str(i)})
    seen = jobs.executions(NAMESPACE, RUN, UID)
    assert {e.reason for e in seen} == {"Vanished"}
    assert [len(c[5].split(",")) for c in slurm.calls] == [2, 2, 1]


def test_a_job_sbatch_refuses_for_good_is_an_error_attempt(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    # The test cluster's nodes have no gres: a job asking for a GPU is never taken.
    jobs.create_execution(spec("gpu", slurm_cluster.nodes[0], "true", gpus=1))
    seen = jobs.executions(NAMESPACE, RUN, UID).get(n("gpu"))
    assert seen is not None and seen.phase is ExecPhase.FAILED and seen.exit_code == -1
    assert seen.container_reason == "SubmitRefused"
    assert "Invalid generic resource" in seen.container_message
    jobs.create_execution(spec("gpu", slurm_cluster.nodes[0], "true", gpus=1))  # not again
    assert _jobs_named(slurm_cluster, n("gpu")) == []


def test_sbatchs_lasting_refusals_are_told_from_passing_trouble() -> None:
    assert refusal(0, "") is None
    lasting = "sbatch: error: Batch job submission failed: Invalid partition name specified"
    assert refusal(1, lasting) == "Batch job submission failed: Invalid partition name specified"
    assert refusal(1, "sbatch: error: Requested node configuration is not available") is not None
    for passing in (
        "sbatch: error: Batch job submission failed: Unable to contact slurm controller",
        "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation",
        "sbatch: error: something nobody has seen before",
        "",
    ):
        assert refusal(1, passing) is None


def test_a_pass_makes_one_squeue_call_for_all_the_runs_jobs(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    for node in slurm_cluster.nodes:
        jobs.create_execution(spec(f"pass-{node}", node, "sleep 60"))
    names = [n(f"pass-{node}") for node in slurm_cluster.nodes]
    for name in names:
        _running(jobs, name)
    _calls(jobs).clear()
    seen = jobs.executions(NAMESPACE, RUN, UID)
    assert sorted(e.name for e in seen.live()) == names
    assert [c[0] for c in _calls(jobs)] == ["squeue"]
    for name in names:
        jobs.delete_execution(NAMESPACE, name)


def test_the_log_is_the_jobs_output_file(jobs: SlurmJobs, slurm_cluster: SlurmCluster) -> None:
    jobs.create_execution(spec("logged", slurm_cluster.nodes[0], "echo out; echo err >&2; exit 1"))
    assert _ended(jobs, n("logged")).exit_code == 1
    assert jobs.read_log(NAMESPACE, n("logged")).split() == ["out", "err"]
    with pytest.raises(LogUnavailable, match="not found"):
        jobs.read_log(NAMESPACE, "no-such-execution")


def test_delete_cancels_the_job_and_removes_its_files(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    jobs.create_execution(spec("doomed", slurm_cluster.nodes[3], "sleep 60"))
    _running(jobs, n("doomed"))
    files = jobs.files(NAMESPACE, RUN, n("doomed"))
    jobs.delete_execution(NAMESPACE, n("doomed"))
    assert jobs.executions(NAMESPACE, RUN, UID).get(n("doomed")) is None
    assert not files.record.exists() and not files.script.exists() and not files.log.exists()
    assert slurm_cluster.active_jobs() == []
    jobs.delete_execution(NAMESPACE, n("doomed"))  # missing is fine
    with pytest.raises(LogUnavailable):
        jobs.read_log(NAMESPACE, n("doomed"))


def test_delete_owned_deletes_that_runs_executions_only(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    first, second, third = slurm_cluster.nodes[:3]
    jobs.create_execution(spec("mine-1", first, "sleep 60"))
    jobs.create_execution(spec("mine-2", second, "sleep 60"))
    jobs.create_execution(spec("theirs", third, "exit 0", run_uid=OTHER_UID))
    _running(jobs, n("mine-1"))
    _running(jobs, n("mine-2"))
    _calls(jobs).clear()
    jobs.delete_owned(NAMESPACE, RUN, UID)
    assert list(jobs.executions(NAMESPACE, RUN, UID)) == []
    assert not [j for j in slurm_cluster.active_jobs() if " mine-" in j]
    cancels = [c for c in _calls(jobs) if c[0] == "scancel"]
    assert len(cancels) == 1 and len(cancels[0]) == 3  # one call for both jobs, by id
    assert _until(jobs, n("theirs"), lambda e: e.phase.terminated, uid=OTHER_UID).exit_code == 0


def test_a_job_its_drained_node_will_not_take_is_pending_with_the_schedulers_reason(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    node = slurm_cluster.nodes[2]
    slurm_cluster.drain(node, "glimmer test: an administrator's drain")
    try:
        jobs.create_execution(spec("held", node, "true"))  # no window: the drain holds it
        # The scheduler's reason (what the engine shows when it is overdue), once it has one.
        seen = _until(jobs, n("held"), lambda e: bool(e.scheduler_message))
        assert seen.phase is ExecPhase.PENDING and not seen.started
        assert "ReqNodeNotAvail" in seen.scheduler_message
        jobs.delete_execution(NAMESPACE, n("held"))
    finally:
        slurm_cluster.resume(node)
        slurm_cluster.wait_idle(node)


class ReservedDoors:
    """The window S1a's nodes give, done by hand: the node drained, a reservation for the run;
    opened = resumed for the block, drained again after."""

    def __init__(self, cluster: SlurmCluster, node: str, reservation: str) -> None:
        self.cluster, self.node, self.reservation = cluster, node, reservation
        self.opened_for: list[str] = []

    @contextmanager
    def opened(self, node: str, owner: str | None = None) -> Iterator[str | None]:
        self.opened_for.append(f"{node} for {owner}")
        self.cluster.resume(node)
        try:
            yield self.reservation
        finally:
            self.cluster.drain(node, "glimmer test: drained by this run")


def test_a_drained_node_takes_the_job_submitted_inside_its_window(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    node, name = slurm_cluster.nodes[3], n("s1b-doors")
    slurm = slurm_cluster.slurm
    slurm.run(
        "scontrol", "create", "reservation", f"reservationname={name}", f"nodes={node}",
        "starttime=now", "duration=10", "users=root", "flags=ignore_jobs",
    )  # fmt: skip
    slurm_cluster.drain(node, "glimmer test: drained by this run")
    doors = ReservedDoors(slurm_cluster, node, name)
    jobs = _jobs(slurm_cluster, tmp_path / "state", doors=doors)
    try:
        jobs.create_execution(spec("opened", node, "sleep 2; hostname"))
        assert doors.opened_for == [f"{node} for {NAMESPACE}/{RUN}/{UID}"]
        assert "drain" in slurm_cluster.node_state(node) or "drng" in slurm_cluster.node_state(node)
        ended = _ended(jobs, n("opened"))
        assert ended.phase is ExecPhase.SUCCEEDED
        assert jobs.read_log(NAMESPACE, n("opened")).strip() == node
        (job_id,) = _jobs_named(slurm_cluster, n("opened"))
        assert f"Reservation={name}" in slurm.run("scontrol", "show", "job", "-o", job_id)
    finally:
        jobs.delete_owned(NAMESPACE, RUN, UID)
        slurm.run("scontrol", "delete", f"reservation={name}", check=False)
        slurm_cluster.resume(node)
        slurm_cluster.wait_idle(node)


class ShutDoors(ReservedDoors):
    """A window that closed before Slurm allocated the job: what an engine killed inside it
    leaves once the engine that resumes drains the node again."""

    @contextmanager
    def opened(self, node: str, owner: str | None = None) -> Iterator[str | None]:
        self.opened_for.append(f"{node} for {owner}")
        yield self.reservation  # never resumed: the job lands on a drained node


def test_a_job_left_pending_on_its_runs_drained_node_is_given_the_window_again(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    node, name = slurm_cluster.nodes[3], n("s1b-reopen")
    slurm = slurm_cluster.slurm
    slurm.run(
        "scontrol", "create", "reservation", f"reservationname={name}", f"nodes={node}",
        "starttime=now", "duration=10", "users=root", "flags=ignore_jobs",
    )  # fmt: skip
    slurm_cluster.drain(node, "glimmer test: drained by this run")
    # A shut window waits in vain for the allocation: a short wait is all it needs to end.
    shut = ShutDoors(slurm_cluster, node, name)
    jobs = _jobs(slurm_cluster, tmp_path / "state", doors=shut, allocation_wait=0.5)
    try:
        jobs.create_execution(spec("stuck", node, "hostname"))
        held = _until(jobs, n("stuck"), lambda e: bool(e.scheduler_message))
        assert held.phase is ExecPhase.PENDING and "ReqNodeNotAvail" in held.scheduler_message
        doors = ReservedDoors(slurm_cluster, node, name)
        jobs.doors = doors  # the resumed engine's nodes: the drain is this run's
        jobs.allocation_wait = jobs_module.ALLOCATION_WAIT  # and its windows wait as they do
        ended = _ended(jobs, n("stuck"))
        assert ended.phase is ExecPhase.SUCCEEDED
        assert jobs.read_log(NAMESPACE, n("stuck")).strip() == node
        assert doors.opened_for == [f"{node} for {NAMESPACE}/{RUN}/{UID}"]
        assert len(_jobs_named(slurm_cluster, n("stuck"))) == 1  # the same job, not a second
    finally:
        jobs.delete_owned(NAMESPACE, RUN, UID)
        slurm.run("scontrol", "delete", f"reservation={name}", check=False)
        slurm_cluster.resume(node)
        slurm_cluster.wait_idle(node)


def test_a_pair_client_is_given_its_servers_hostname(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    server, client = slurm_cluster.nodes[:2]
    both = (server, client)
    placeholder = jobs.rendezvous_address(NAMESPACE, "bp-x", "server")
    assert placeholder == "server.bp-x"  # pure: no call, no node known here
    seat = Seat("bp-x", "server", "BURNIN_PEER_HOST")
    asked = spec(
        "client", client, 'echo "$BURNIN_PEER_HOST"', env=(("BURNIN_PEER_HOST", placeholder),),
        role="client", unit_nodes=both, seat=seat,
    )  # fmt: skip
    jobs.create_execution(asked)
    ended = _ended(jobs, n("client"))
    assert jobs.read_log(NAMESPACE, n("client")).strip() == server
    assert ended.spec == asked  # the record keeps the spec as the engine asked it


def test_group_ranks_find_their_nodes_in_the_unit() -> None:
    nodes = ("n3", "n1", "n4")
    base = spec("r", "n1", "true", role="rank-1", unit_nodes=nodes)
    assert [role_node(base, f"rank-{i}") for i in range(3)] == list(nodes)
    assert role_node(base, "rank-3") is None
    pair = spec("p", "n2", "true", role="client", unit_nodes=("n5", "n2"))
    assert (role_node(pair, "server"), role_node(pair, "client")) == ("n5", "n2")


def test_a_group_rank_is_given_rank_zeros_hostname(
    jobs: SlurmJobs, slurm_cluster: SlurmCluster
) -> None:
    ranks = slurm_cluster.nodes[:3][::-1]  # rank 0 on the last of them
    seat = Seat("bg-x", "rank-0", "BURNIN_ROOT_HOST")
    for rank, node in enumerate(ranks):
        jobs.create_execution(
            spec(
                f"rank-{rank}", node, 'echo "$BURNIN_ROOT_HOST"', role=f"rank-{rank}",
                unit_nodes=ranks, seat=seat, env=(("BURNIN_ROOT_HOST", "rank-0.bg-x"),),
            )
        )  # fmt: skip
    for rank in range(3):
        _ended(jobs, n(f"rank-{rank}"))
        assert jobs.read_log(NAMESPACE, n(f"rank-{rank}")).strip() == ranks[0]


def _sh(text: str) -> str:
    return shlex.quote(text)
