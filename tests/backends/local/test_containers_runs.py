"""Executions under a container runtime (backends/local/executions.py, supervise.py): with this
machine's docker client and no engine, an attempt is an Error naming docker, never a Fail; a
container without an image is an Error naming the test; and through a test double of a
runtime (fakectr.py, on a PATH of its own) the runner gets the spec's environment only, exit
codes pass through, a deadline and a delete remove the container by name, and a glimmer that
finds the supervisor gone removes it too, by what the record says ran it."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from local_world import (
    NODE,
    FastClock,
    backend,
    drive,
    fake_test,
    left_alive,
    recorded_processes,
    run_object,
    runner_command,
)

from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.drivers import drive_wall_clock
from glimmer.backends.local.backend import LocalBackend
from glimmer.backends.local.procs import ProcessId, identify
from glimmer.contract.vocab import Phase, RunnerVerdict
from glimmer.engine.backend import ExecPhase, Execution, ExecutionSpec
from glimmer.engine.harvest import harvest_execution
from glimmer.engine.reconciler import Engine

FAKECTR = Path(__file__).with_name("fakectr.py")
IMAGE = "ghcr.io/glimmer/fake-runner:test"
UID = "uid-run"


def _runner(tmp_path: Path) -> list[str]:
    """The fake runner's command line, written once: rewriting the script while a runner
    starts would hand that runner an empty program."""
    script = tmp_path / "fake_runner.py"
    return [sys.executable, str(script)] if script.exists() else runner_command(tmp_path)


@dataclasses.dataclass(frozen=True)
class FakeRuntime:
    """The test double installed as ``docker`` in ``bin``, its state in ``state``."""

    bin: Path
    state: Path

    def removed(self) -> list[str]:
        removed = self.state / "removed"
        return removed.read_text().splitlines() if removed.exists() else []

    def container(self, name: str, wait: float = 10.0) -> ProcessId:
        """The running container's process, once it runs."""
        pidfile = self.state / name
        until = time.monotonic() + wait
        while True:
            pid = pidfile.read_text() if pidfile.exists() else ""
            found = identify(int(pid)) if pid else None
            if found is not None:
                return found
            assert time.monotonic() < until, f"container {name} never ran"
            time.sleep(0.02)


@pytest.fixture
def fake_docker(tmp_path: Path) -> FakeRuntime:
    runtime = FakeRuntime(tmp_path / "bin", tmp_path / "fakectr")
    runtime.bin.mkdir()
    program = runtime.bin / "docker"
    program.write_text(
        f'#!/bin/sh\nFAKECTR_STATE={runtime.state} exec {sys.executable} {FAKECTR} "$@"\n'
    )
    program.chmod(0o755)
    return runtime


def _spec(tmp_path: Path, name: str = "x-a1", image: str = IMAGE, **env: str) -> ExecutionSpec:
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
        image=image,
        env=(("BURNIN_ATTEMPT", "1"), *env.items()),
        duration_seconds=60,
        deadline_seconds=180,
        labels={"burnin.glimmer.ai/run": "run"},
        test_spec=BurnInTestSpec.model_validate({"kind": "gpu-burn", "durationSeconds": 60}),
        command=tuple(_runner(tmp_path)),
    )


def _in_docker(tmp_path: Path, runtime: FakeRuntime, **kwargs: object) -> LocalBackend:
    return backend(
        tmp_path / "state",
        _runner(tmp_path),
        kwargs.pop("tests", {}),  # type: ignore[arg-type]
        runtime="docker",
        runtime_path=str(runtime.bin),
        **kwargs,
    )


def _until(b: LocalBackend, done: object, name: str = "x-a1", wait: float = 10.0) -> Execution:
    until = time.monotonic() + wait
    while True:
        found = b.executions("default", "run", UID).get(name)
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


def _started(b: LocalBackend, name: str = "x-a1", wait: float = 10.0) -> None:
    """Wait until the runner says it started (after it set up its signal handling)."""
    until = time.monotonic() + wait
    while "started" not in _log(b, name):
        assert time.monotonic() < until, f"{name} never started"
        time.sleep(0.02)


def _log(b: LocalBackend, name: str) -> str:
    path = b.processes.records.find("default", name)
    return path.log.read_text() if path is not None and path.log.exists() else ""


def _container_test(tmp_path: Path, name: str, **kwargs: object) -> BurnInTestSpec:
    """A gated test of the fake runner, run as the container's entrypoint."""
    spec = fake_test(name, **kwargs)  # type: ignore[arg-type]
    value = spec.model_dump(mode="json", by_alias=True, exclude_unset=True)
    value["runner"].update(image=IMAGE, command=_runner(tmp_path))
    return BurnInTestSpec.model_validate(value)


def test_docker_without_its_engine_makes_the_attempt_an_error_naming_docker_never_a_fail(
    tmp_path: Path, runner: list[str]
) -> None:
    # This machine's own docker client (or none at all): no engine answers in CI.
    b = backend(tmp_path / "state", runner, {"burn": fake_test("burn")}, runtime="docker")
    b.submit(run_object())
    final = drive(b)
    assert final.status is not None and final.status.phase is Phase.ERROR
    [result] = final.status.results or []
    assert result.phase is Phase.ERROR
    assert "container runtime docker" in (result.message or "")
    [execution] = b.executions("default", "run", final.metadata.uid or "")
    assert execution.container_reason == "RuntimeUnavailable" and execution.exit_code == -1
    assert recorded_processes(b) == []  # nothing was started for it


def test_a_container_without_an_image_is_an_error_naming_the_test(
    tmp_path: Path, fake_docker: FakeRuntime
) -> None:
    b = _in_docker(tmp_path, fake_docker)
    b.create_execution(_spec(tmp_path, image=""))
    done = _until(b, lambda e: e.phase.terminated)
    assert (done.phase, done.exit_code, done.container_reason) == (ExecPhase.FAILED, -1, "NoImage")
    harvest = harvest_execution(b, done)
    assert harvest.parsed.verdict is RunnerVerdict.ERROR
    assert 'test "t": no image for kind "gpu-burn"' in harvest.parsed.message
    assert "run without a container runtime" in harvest.parsed.message
    assert fake_docker.removed() == [] and not (fake_docker.state / "x-a1").exists()


def test_in_a_container_the_runner_gets_the_specs_environment_and_nothing_of_glimmers(
    tmp_path: Path, fake_docker: FakeRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLIMMER_SECRET", "must-not-leak")
    b = _in_docker(tmp_path, fake_docker)
    names = "BURNIN_ATTEMPT,FAKE_MINE,GLIMMER_SECRET,HOME"
    b.create_execution(_spec(tmp_path, FAKE_PRINT_ENV=names, FAKE_MINE="mine"))
    done = _until(b, lambda e: e.phase.terminated)
    assert done.phase is ExecPhase.SUCCEEDED and done.exit_code == 0
    log = b.read_log("default", "x-a1")
    assert "env.BURNIN_ATTEMPT=1" in log and "env.FAKE_MINE=mine" in log
    assert "env.GLIMMER_SECRET=<unset>" in log and "env.HOME=<unset>" in log
    launch = _record(b)["launch"]
    assert isinstance(launch, dict) and launch["runtime"] == "docker"
    assert launch["argv"][:5] == [
        str(fake_docker.bin / "docker"),
        "run",
        "--rm",
        "--name",
        "glimmer-default-x-a1",
    ]


@pytest.mark.parametrize("code", [1, 3, 7])
def test_a_containers_exit_code_passes_through(
    tmp_path: Path, fake_docker: FakeRuntime, code: int
) -> None:
    b = _in_docker(tmp_path, fake_docker)
    b.create_execution(_spec(tmp_path, FAKE_EXIT=str(code)))
    done = _until(b, lambda e: e.phase.terminated)
    assert (done.phase, done.exit_code) == (ExecPhase.FAILED, code)


def test_a_container_past_its_deadline_is_removed_by_name_and_the_attempt_is_error(
    tmp_path: Path, fake_docker: FakeRuntime
) -> None:
    # duration 1 s: the deadline is 121 s, which this clock makes about 2 host seconds; the
    # runner ignores SIGTERM, so only the container's removal ends it.
    clock = FastClock(60)
    tests = {
        "hangs": _container_test(tmp_path, "hangs", sleep=60, duration=1, FAKE_IGNORE_TERM="1")
    }
    b = _in_docker(tmp_path, fake_docker, tests=tests, clock=clock)
    b.submit(run_object())
    final = drive_wall_clock(b, Engine(b), "default", "run", poll=20, sleep=clock.sleep)
    assert final is not None and final.status is not None
    assert final.status.phase is Phase.ERROR
    [result] = final.status.results or []
    assert result.phase is Phase.ERROR and "deadline" in (result.message or "")
    [execution] = b.executions("default", "run", final.metadata.uid or "")
    assert execution.reason == "DeadlineExceeded"
    assert fake_docker.removed() == [f"glimmer-default-{execution.name}"]
    assert left_alive(recorded_processes(b)) == []
    assert not (fake_docker.state / f"glimmer-default-{execution.name}").exists()


def test_deleting_a_running_container_removes_it_by_name(
    tmp_path: Path, fake_docker: FakeRuntime
) -> None:
    b = _in_docker(tmp_path, fake_docker)
    b.create_execution(_spec(tmp_path, FAKE_SLEEP="60", FAKE_IGNORE_TERM="1"))
    container = fake_docker.container("glimmer-default-x-a1")
    _started(b)
    processes = recorded_processes(b)
    b.delete_execution("default", "x-a1")
    assert "glimmer-default-x-a1" in fake_docker.removed()
    assert left_alive([container, *processes]) == []
    assert b.processes.records.find("default", "x-a1") is None


def test_a_glimmer_finding_the_supervisor_gone_removes_the_container_the_record_names(
    tmp_path: Path, fake_docker: FakeRuntime
) -> None:
    b = _in_docker(tmp_path, fake_docker)
    b.create_execution(_spec(tmp_path, FAKE_SLEEP="60", FAKE_IGNORE_TERM="1"))
    container = fake_docker.container("glimmer-default-x-a1")
    _started(b)
    supervisor = ProcessId.from_json(_record(b).get("supervisor"))
    assert supervisor is not None
    os.kill(supervisor.pid, signal.SIGKILL)
    assert left_alive([supervisor]) == []
    # A glimmer started again, with no container runtime of its own: the record says docker.
    again = backend(tmp_path / "state", _runner(tmp_path), {})
    done = _until(again, lambda e: e.phase.terminated)
    assert (done.phase, done.reason) == (ExecPhase.FAILED, "Vanished")
    assert fake_docker.removed() == ["glimmer-default-x-a1"]
    assert left_alive([container]) == []


def test_auto_with_a_client_whose_engine_is_down_runs_the_runner_as_a_process(
    tmp_path: Path,
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text("#!/bin/sh\necho 'Cannot connect' >&2\nexit 1\n")
    (bin_dir / "docker").chmod(0o755)
    b = backend(
        tmp_path / "state", _runner(tmp_path), {}, runtime="auto", runtime_path=str(bin_dir)
    )
    b.create_execution(_spec(tmp_path, FAKE_PRINT_ENV="FAKE_MINE", FAKE_MINE="mine"))
    done = _until(b, lambda e: e.phase.terminated)
    assert done.phase is ExecPhase.SUCCEEDED and "env.FAKE_MINE=mine" in _log(b, "x-a1")
    launch = _record(b)["launch"]
    assert isinstance(launch, dict) and launch["runtime"] == "process" and "container" not in launch


def test_a_glimmer_started_again_sees_a_container_it_did_not_start_run_to_its_end(
    tmp_path: Path, fake_docker: FakeRuntime
) -> None:
    b = _in_docker(tmp_path, fake_docker)
    b.create_execution(_spec(tmp_path, FAKE_SLEEP="2", FAKE_EXIT="1"))
    fake_docker.container("glimmer-default-x-a1")
    again = backend(tmp_path / "state", _runner(tmp_path), {})  # no runtime of its own
    assert _until(again, lambda e: e.phase is ExecPhase.RUNNING).exit_code is None
    done = _until(again, lambda e: e.phase.terminated)
    log = again.read_log("default", "x-a1")
    assert (done.phase, done.exit_code, done.reason) == (ExecPhase.FAILED, 1, ""), log
    assert "miscompares=0" in log
    assert fake_docker.removed() == []  # it ended by itself: --rm, nothing to remove
