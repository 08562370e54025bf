"""Executions as processes (backends/local/executions.py, supervise.py): what a runner is
given, what a record reads as when its supervisor is killed, what delete stops, a claim nobody
took, a second supervisor for one record, a runner that cannot start; and the node this host
is, its cordon shared through the state directory."""

from __future__ import annotations

import dataclasses
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from local_world import NODE, backend, left_alive, runner_command

from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.specs import spec_from_json, spec_to_json
from glimmer.backends.local import executions as executions_module
from glimmer.backends.local.backend import LocalBackend
from glimmer.backends.local.executions import SUPERVISOR_MODULE, ProcessExecutions
from glimmer.backends.local.nodes import hostname
from glimmer.backends.local.procs import ProcessId, alive, start_time
from glimmer.engine.backend import (
    ExecPhase,
    Execution,
    ExecutionSpec,
    LogUnavailable,
    Mount,
    Privileges,
    Resources,
    Seat,
)

UID = "uid-run"


def _spec(name: str = "x-a1", **env: str) -> ExecutionSpec:
    return ExecutionSpec(
        name=name,
        namespace="default",
        run="run",
        run_uid=UID,
        test="t",
        test_index=0,
        kind="gpu-burn",
        scope="Node",
        node=NODE,
        unit_nodes=(NODE,),
        attempt=1,
        role="",
        rank=None,
        nranks=None,
        image="ghcr.io/glimmer/runner:test",
        env=(("BURNIN_ATTEMPT", "1"), *env.items()),
        duration_seconds=60,
        deadline_seconds=180,
        labels={"burnin.glimmer.ai/run": "run"},
        test_spec=BurnInTestSpec.model_validate({"kind": "gpu-burn", "durationSeconds": 60}),
    )


def _local(tmp_path: Path, command: list[str] | None = None) -> LocalBackend:
    return backend(tmp_path / "state", command or runner_command(tmp_path), {})


def _observe(b: LocalBackend, name: str = "x-a1") -> Execution | None:
    return b.executions("default", "run", UID).get(name)


def _until(b: LocalBackend, done: object, name: str = "x-a1", wait: float = 10.0) -> Execution:
    until = time.monotonic() + wait
    while True:
        found = _observe(b, name)
        if found is not None and done(found):  # type: ignore[operator]
            return found
        assert time.monotonic() < until, f"{name} is {found}"
        time.sleep(0.02)


def _record(b: LocalBackend, name: str = "x-a1") -> dict[str, object]:
    path = b.processes.records.find("default", name)
    assert path is not None
    record = path.read()
    assert record is not None
    return record


def _process(record: dict[str, object], key: str) -> ProcessId:
    found = ProcessId.from_json(record.get(key))
    assert found is not None
    return found


def test_a_runner_gets_the_specs_environment_plus_path_home_and_lang_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLIMMER_SECRET", "must-not-leak")
    b = _local(tmp_path)
    names = "BURNIN_ATTEMPT,FAKE_MINE,PATH,HOME,GLIMMER_SECRET"
    b.create_execution(_spec(FAKE_PRINT_ENV=names, FAKE_MINE="mine"))
    done = _until(b, lambda e: e.phase.terminated)
    assert done.phase is ExecPhase.SUCCEEDED and done.exit_code == 0
    log = b.read_log("default", "x-a1")
    assert "env.BURNIN_ATTEMPT=1" in log and "env.FAKE_MINE=mine" in log
    assert f"env.PATH={os.environ['PATH']}" in log and "env.HOME=" in log
    assert "env.GLIMMER_SECRET=<unset>" in log


def test_an_execution_is_pending_then_running_then_succeeded_with_host_times(
    tmp_path: Path,
) -> None:
    b = _local(tmp_path)
    b.create_execution(_spec(FAKE_SLEEP="0.3"))
    running = _until(b, lambda e: e.phase is ExecPhase.RUNNING)
    assert running.started_at is not None and running.ready and running.exit_code is None
    done = _until(b, lambda e: e.phase.terminated)
    assert done.phase is ExecPhase.SUCCEEDED and done.container_reason == "Completed"
    assert done.finished_at is not None and done.started_at is not None
    assert done.created_at <= done.started_at <= done.finished_at
    work = tmp_path / "state" / "executions" / "default" / "run" / "x-a1.work"
    assert f"cwd={work}" in b.read_log("default", "x-a1")


def test_a_failing_runner_is_failed_with_its_exit_code(tmp_path: Path) -> None:
    b = _local(tmp_path)
    b.create_execution(_spec(FAKE_EXIT="1", FAKE_MISCOMPARES="4"))
    done = _until(b, lambda e: e.phase.terminated)
    assert (done.phase, done.exit_code, done.reason) == (ExecPhase.FAILED, 1, "")
    assert "miscompares=4" in b.read_log("default", "x-a1")


def test_a_supervisor_killed_mid_run_reads_failed_vanished_and_its_runner_is_stopped(
    tmp_path: Path,
) -> None:
    b = _local(tmp_path)
    b.create_execution(_spec(FAKE_SLEEP="30"))
    _until(b, lambda e: e.phase is ExecPhase.RUNNING)
    record = _record(b)
    supervisor, runner = _process(record, "supervisor"), _process(record, "runner")
    os.kill(supervisor.pid, signal.SIGKILL)
    assert left_alive([supervisor]) == []
    vanished = _until(b, lambda e: e.phase.terminated)
    assert vanished.phase is ExecPhase.FAILED and vanished.reason == "Vanished"
    assert vanished.exit_code == -1
    assert left_alive([runner]) == []  # stopped when found unsupervised
    assert _observe(b) == vanished  # the end was recorded: every later read sees the same
    assert _record(b)["reason"] == "Vanished"


def test_delete_stops_the_runner_and_its_children_and_removes_record_and_log(
    tmp_path: Path,
) -> None:
    b = _local(tmp_path)
    child_file = tmp_path / "child.pid"
    b.create_execution(_spec(FAKE_SLEEP="30", FAKE_CHILD=str(child_file)))
    _until(b, lambda e: e.phase is ExecPhase.RUNNING and child_file.exists())
    record = _record(b)
    processes = [_process(record, "supervisor"), _process(record, "runner")]
    child = int(child_file.read_text())
    b.delete_execution("default", "x-a1")
    assert left_alive(processes) == []
    assert _gone(child)
    assert _observe(b) is None
    with pytest.raises(LogUnavailable):
        b.read_log("default", "x-a1")
    assert list((tmp_path / "state" / "executions").rglob("x-a1*")) == []


def _gone(pid: int, wait: float = 5.0) -> bool:
    until = time.monotonic() + wait
    while time.monotonic() < until:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def test_a_claim_no_supervisor_took_reads_absent_and_the_next_create_runs_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marks = tmp_path / "marks"
    b = _local(tmp_path)
    # The creating process dies between writing the record and spawning its supervisor.
    monkeypatch.setattr(ProcessExecutions, "_spawn", lambda self, path: None)
    b.create_execution(_spec(FAKE_MARKS=str(marks)))
    assert _observe(b) is not None and _observe(b).phase is ExecPhase.PENDING  # type: ignore[union-attr]
    monkeypatch.undo()
    monkeypatch.setattr(executions_module, "CLAIM_GRACE", 0.0)
    time.sleep(0.01)
    assert _observe(b) is None  # nothing ever ran under it
    b.create_execution(_spec(FAKE_MARKS=str(marks)))
    done = _until(b, lambda e: e.phase.terminated)
    assert done.phase is ExecPhase.SUCCEEDED
    assert marks.read_text().splitlines() == ["? a1"]


def test_a_second_supervisor_for_a_claimed_record_runs_nothing(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    b = _local(tmp_path)
    b.create_execution(_spec(FAKE_MARKS=str(marks)))
    _until(b, lambda e: e.phase.terminated)
    before = _record(b)
    path = b.processes.records.find("default", "x-a1")
    assert path is not None
    _supervise_and_wait(path.record)
    b.create_execution(_spec(FAKE_MARKS=str(marks)))  # and a create of the same name again
    _wait_no_supervisor(path.record)
    assert marks.read_text().splitlines() == ["? a1"]
    assert _record(b) == before


def _supervisors_of(record: Path) -> list[int]:
    """Pids of live processes whose command line names ``record`` (its supervisors)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if str(record).encode() in cmdline.split(b"\0") and start_time(int(proc.name)) is not None:
            found.append(int(proc.name))
    return found


def _wait_no_supervisor(record: Path, wait: float = 10.0) -> None:
    until = time.monotonic() + wait
    while _supervisors_of(record):
        assert time.monotonic() < until, "a supervisor is still running"
        time.sleep(0.02)


def _supervise_and_wait(record: Path) -> None:
    """Start one more supervisor for ``record`` and wait until it has exited."""
    subprocess.run([sys.executable, "-m", SUPERVISOR_MODULE, str(record)], check=True)
    _wait_no_supervisor(record)


def test_a_runner_that_cannot_be_started_is_failed_with_start_error(tmp_path: Path) -> None:
    b = _local(tmp_path, [str(tmp_path / "no-such-runner")])
    b.create_execution(_spec())
    done = _until(b, lambda e: e.phase.terminated)
    assert (done.phase, done.exit_code, done.container_reason) == (
        ExecPhase.FAILED,
        127,
        "StartError",
    )
    assert "no-such-runner" in done.container_message


def test_the_default_runner_command_is_glimmer_runner_of_this_install_with_the_kind(
    tmp_path: Path,
) -> None:
    processes = ProcessExecutions(tmp_path, LocalBackend(tmp_path).clock)
    assert processes.argv(_spec()) == [
        str(Path(sys.executable).parent / "glimmer-runner"),
        "gpu-burn",
    ]
    custom = ExecutionSpec(**{**_spec().__dict__, "command": ("/bin/probe",), "args": ("-v",)})
    assert processes.argv(custom) == ["/bin/probe", "-v"]


def test_a_record_reads_back_exactly_the_spec_it_was_created_with() -> None:
    spec = ExecutionSpec(
        **{
            **_spec().__dict__,
            "role": "server",
            "mounts": (Mount("/dev/infiniband", "/dev/infiniband", False, "Directory"),),
            "resources": Resources((("nvidia.com/gpu", "8"),), (("memory", "16Gi"),)),
            "privileges": Privileges(privileged=True, run_as_user=0, host_network=True),
            "seat": Seat("bp-run-t0-a1-0000", "client", "BURNIN_PEER_HOST"),
        }
    )
    assert spec_from_json(spec_to_json(spec)) == spec


def test_rendezvous_addresses_are_loopback_addresses_this_host_answers_on(
    tmp_path: Path,
) -> None:
    b = _local(tmp_path)
    address = b.rendezvous_address("default", "bp-run-t0-a1-0000", "server")
    assert address.startswith("127.") and address != "127.0.0.1"
    with socket.socket() as server:
        server.bind(("0.0.0.0", 0))
        server.listen()
        port = server.getsockname()[1]
        with socket.create_connection((address, port), timeout=5):
            server.accept()[0].close()


def test_the_default_node_is_this_host_with_its_labels_kernel_and_arch(tmp_path: Path) -> None:
    b = LocalBackend(tmp_path)
    (node,) = b.list_nodes()
    assert node.name == hostname() == node.labels["kubernetes.io/hostname"]
    assert node.kernel == os.uname().release
    assert node.labels["kubernetes.io/arch"] == node.arch and node.arch
    assert node.labels["kubernetes.io/os"] == "linux"
    assert b.list_nodes({"kubernetes.io/os": "linux"}) == [node]


def test_a_cordon_and_its_stamps_are_seen_by_another_process_over_the_same_state_dir(
    tmp_path: Path,
) -> None:
    first, second = LocalBackend(tmp_path, NODE), LocalBackend(tmp_path, NODE)
    assert second.get_node(NODE) is not None  # read once: nothing may be served from a cache
    first.update_node(NODE, unschedulable=True, annotations={"burnin.glimmer.ai/x": "run"})
    seen = second.get_node(NODE)
    assert seen is not None and seen.unschedulable
    assert dict(seen.annotations) == {"burnin.glimmer.ai/x": "run"}
    second.update_node(NODE, unschedulable=False, annotations={"burnin.glimmer.ai/x": None})
    back = first.get_node(NODE)
    assert back is not None and not back.unschedulable and not back.annotations


def test_alive_tells_a_recorded_process_from_a_reused_pid() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        start = int(Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        assert alive(ProcessId(child.pid, start))
        assert not alive(ProcessId(child.pid, start + 1))  # same pid, another process
    finally:
        child.kill()
        child.wait()
    assert not alive(ProcessId(child.pid, start))


def _with_mounts(*mounts: Mount, **env: str) -> ExecutionSpec:
    return dataclasses.replace(_spec(**env), mounts=mounts)


def test_a_host_path_asked_for_at_another_path_is_not_remapped_for_a_process(
    tmp_path: Path,
) -> None:
    b = _local(tmp_path)
    b.create_execution(_with_mounts(Mount(str(tmp_path), "/data"), FAKE_PRINT_ENV="PATH"))
    done = _until(b, lambda e: e.phase.terminated)
    assert done.phase is ExecPhase.SUCCEEDED  # it ran, seeing the host's own paths
    launch = _record(b)["launch"]
    assert isinstance(launch, dict) and "/data" not in str(launch)


def test_a_host_path_missing_on_this_host_is_no_refusal_the_runner_sees_the_host_as_it_is(
    tmp_path: Path,
) -> None:
    b = _local(tmp_path)
    missing = str(tmp_path / "not-here")
    b.create_execution(_with_mounts(Mount(missing, missing, host_type="Directory")))
    assert _until(b, lambda e: e.phase.terminated).phase is ExecPhase.SUCCEEDED


def test_an_infiniband_mount_raises_the_runners_memlock_limit_and_others_do_not(
    tmp_path: Path,
) -> None:
    b = _local(tmp_path)
    here = str(tmp_path)
    plain = _with_mounts(Mount(here, here), FAKE_PRINT_MEMLOCK="1")
    rdma = dataclasses.replace(
        plain, name="rdma-a1", mounts=(Mount("/dev/infiniband", "/dev/infiniband"),)
    )
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    low = 4096 if hard == resource.RLIM_INFINITY else min(4096, hard // 2)
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (low, hard))  # inherited by the supervisors
    try:
        b.create_execution(plain)
        b.create_execution(rdma)
    finally:
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (soft, hard))
    for name in ("x-a1", "rdma-a1"):
        assert _until(b, lambda e: e.phase.terminated, name).phase is ExecPhase.SUCCEEDED
    assert f"memlock={low}" in b.read_log("default", "x-a1")
    # Unlimited where this process may raise the hard limit, else up to the hard limit.
    raised = b.read_log("default", "rdma-a1").split("memlock=")[1].split()[0]
    assert int(raised) in (resource.RLIM_INFINITY, hard)


def test_a_supervisor_arriving_after_a_delete_began_runs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marks = tmp_path / "marks"
    b = _local(tmp_path)
    monkeypatch.setattr(ProcessExecutions, "_spawn", lambda self, path: None)
    b.create_execution(_spec(FAKE_MARKS=str(marks)))
    path = b.processes.records.find("default", "x-a1")
    assert path is not None
    path.write({**_record(b), "deleting": True})  # a delete that was killed half-way
    _supervise_and_wait(path.record)
    assert not marks.exists() and "supervisor" not in _record(b)
    b.delete_execution("default", "x-a1")  # the next delete finishes it
    assert _observe(b) is None and b.processes.records.find("default", "x-a1") is None
