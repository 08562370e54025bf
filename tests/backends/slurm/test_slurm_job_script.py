"""The batch script of a Slurm execution (backends/slurm/job_script.py), checked without a
cluster: the script is plain bash, so it is run here as a batch step would run it, and what
the runner received and what the script wrote back are read."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from glimmer.backends.slurm.job_files import JobFiles
from glimmer.backends.slurm.job_script import (
    Job,
    Probe,
    ProbeUnsupported,
    probe_of,
    render,
    sbatch_argv,
    time_limit_minutes,
)

AWKWARD = {
    "SPACES": "a b  c",
    "QUOTES": 'it\'s "quoted"',
    "DOLLAR": "$HOME and $(echo no) and `echo no`",
    "NEWLINES": "line one\nline two\n",
    "BACKSLASH": "a\\nb\\",
    "EMPTY": "",
    "dotted.name-not-shell": "still delivered",
}
DUMP_ENV = "import json, os; print(json.dumps(dict(os.environ)))"


def _job(tmp_path: Path, argv: tuple[str, ...], **changes: object) -> Job:
    fields: dict[str, object] = {
        "name": "x-a1",
        "node": "n1",
        "run_uid": "uid-1",
        "argv": argv,
        "env": (),
        "deadline_seconds": 60,
        "files": JobFiles(tmp_path / "x-a1.json"),
    }
    fields.update(changes)
    return Job(**fields)  # type: ignore[arg-type]


def _run(job: Job, wait: float = 30.0) -> subprocess.CompletedProcess[str]:
    job.files.script.write_text(render(job))
    return subprocess.run(
        ["bash", str(job.files.script)], capture_output=True, text=True, timeout=wait
    )


def test_awkward_environment_values_reach_the_runner_verbatim(tmp_path: Path) -> None:
    job = _job(tmp_path, (sys.executable, "-c", DUMP_ENV), env=tuple(AWKWARD.items()))
    done = _run(job)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    for name, value in AWKWARD.items():
        assert seen[name] == value
    # Only what the spec gives (env -i): nothing of the batch step's own environment leaks.
    assert "PATH" not in seen and "HOME" not in seen


def test_awkward_arguments_reach_the_runner_verbatim(tmp_path: Path) -> None:
    words = ("a b", "'", '"', "$HOME", "x\ny", "")
    code = "import json, sys; print(json.dumps(sys.argv[1:]))"
    done = _run(_job(tmp_path, (sys.executable, "-c", code, *words)))
    assert json.loads(done.stdout) == list(words)


@pytest.mark.parametrize("code", [0, 1, 2, 3])
def test_the_runners_exit_code_is_written_and_returned(tmp_path: Path, code: int) -> None:
    job = _job(tmp_path, ("/bin/sh", "-c", f"exit {code}"))
    done = _run(job)
    assert done.returncode == code
    assert job.files.exit.read_text() == f"{code}\n"
    assert not job.files.deadline.exists()
    assert not list(tmp_path.glob("*.tmp.*"))  # written by a rename, nothing left beside it


def test_the_runner_works_in_a_folder_of_its_own(tmp_path: Path) -> None:
    job = _job(tmp_path, ("/bin/sh", "-c", "pwd"))
    assert _run(job).stdout.strip() == str(job.files.work)


def test_the_watchdog_stops_a_runner_past_its_deadline_and_says_so(tmp_path: Path) -> None:
    job = _job(tmp_path, ("/bin/sh", "-c", "sleep 30"), deadline_seconds=1)
    done = _run(job, wait=20.0)  # stopped, not waited out: the runner would sleep 30 s
    assert job.files.deadline.exists()
    assert done.returncode == 128 + 15  # SIGTERM, as a shell reports it
    assert job.files.exit.read_text() == "143\n"


def test_the_watchdog_reaches_what_the_runner_started(tmp_path: Path) -> None:
    marker = tmp_path / "child-alive"
    child = f"(sleep 3; touch {marker}) & wait"
    job = _job(tmp_path, ("/bin/sh", "-c", child), deadline_seconds=1)
    _run(job)
    time.sleep(3)
    assert job.files.deadline.exists()
    assert not marker.exists()  # the runner's own child was stopped with it


def test_an_exec_probe_runs_until_it_passes_and_marks_ready(tmp_path: Path) -> None:
    flag = tmp_path / "listening"
    runner = f"sleep 1; touch {flag}; sleep 2"
    probe = Probe(command=("/bin/sh", "-c", f"test -e {flag}"), period=1)
    job = _job(tmp_path, ("/bin/sh", "-c", runner), probe=probe)
    done = _run(job)
    assert done.returncode == 0
    assert job.files.ready.exists()


def test_an_exec_probe_that_never_passes_leaves_it_unready(tmp_path: Path) -> None:
    probe = Probe(command=("/bin/false",), period=1)
    job = _job(tmp_path, ("/bin/sh", "-c", "sleep 1.5"), probe=probe)
    _run(job)
    assert not job.files.ready.exists()
    assert job.files.exit.read_text() == "0\n"


def test_the_exec_probe_sees_the_runners_environment(tmp_path: Path) -> None:
    probe = Probe(command=("/bin/sh", "-c", 'test "$PROBE_ME" = "x y"'), period=1)
    job = _job(tmp_path, ("/bin/sh", "-c", "sleep 2"), env=(("PROBE_ME", "x y"),), probe=probe)
    _run(job)
    assert job.files.ready.exists()


def test_a_tcp_probe_passes_once_the_port_listens(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = (
        "import socket, time; time.sleep(1); s = socket.socket(); "
        "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
        f"s.bind(('127.0.0.1', {port})); s.listen(); time.sleep(3)"
    )
    probe = Probe(host="127.0.0.1", port=port, period=1)
    job = _job(tmp_path, (sys.executable, "-c", server), probe=probe)
    _run(job)
    assert job.files.ready.exists()


def test_a_tcp_probe_to_a_closed_port_leaves_it_unready(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    job = _job(tmp_path, ("/bin/sh", "-c", "sleep 1.5"), probe=Probe(host="127.0.0.1", port=port))
    _run(job)
    assert not job.files.ready.exists()


def test_probes_are_read_from_the_tests_readiness_probe() -> None:
    assert probe_of(None) is None
    exec_probe = probe_of(
        {"exec": {"command": ["cat", "/tmp/ok"]}, "periodSeconds": 2, "initialDelaySeconds": 3}
    )
    assert exec_probe == Probe(command=("cat", "/tmp/ok"), period=2, initial_delay=3)
    tcp = probe_of({"tcpSocket": {"port": 18515}})
    assert tcp == Probe(port=18515, period=10, timeout=1)
    assert probe_of({"tcpSocket": {"port": "18515", "host": "ib0"}}) == Probe(
        host="ib0", port=18515
    )


@pytest.mark.parametrize(
    ("probe", "said"),
    [
        ({"httpGet": {"path": "/", "port": 80}}, "httpGet is not run on Slurm"),
        ({"grpc": {"port": 9000}}, "grpc is not run on Slurm"),
        ({"tcpSocket": {"port": "control"}}, "must be a port number"),
        ({"exec": {}}, "needs a command"),
    ],
)
def test_a_probe_slurm_cannot_run_is_refused_naming_why(
    probe: dict[str, object], said: str
) -> None:
    with pytest.raises(ProbeUnsupported, match=said):
        probe_of(probe)


def test_sbatch_pins_the_job_to_its_node_and_names_it(tmp_path: Path) -> None:
    job = _job(
        tmp_path,
        ("glimmer-runner", "host-health"),
        partition="debug",
        reservation="glimmer-r1",
        gpus=8,
        deadline_seconds=720,
    )
    argv = sbatch_argv(job)
    assert argv[0] == "sbatch" and argv[-1] == str(job.files.script)
    for option in (
        "--parsable",
        "--job-name=x-a1",
        "--nodelist=n1",
        "--nodes=1",
        "--ntasks=1",
        "--comment=uid-1",
        f"--output={job.files.log}",
        "--no-requeue",
        "--export=NONE",
        "--partition=debug",
        "--reservation=glimmer-r1",
        "--gres=gpu:8",
        "--time=13",
    ):
        assert option in argv
    plain = sbatch_argv(_job(tmp_path, ("true",)))
    assert not [a for a in plain if a.startswith(("--partition", "--reservation", "--gres"))]


def test_slurms_time_limit_is_whole_minutes_beyond_the_watchdog() -> None:
    assert time_limit_minutes(1) == 1
    assert time_limit_minutes(25) == 1
    assert time_limit_minutes(26) == 2
    assert time_limit_minutes(720) == 13  # 12 min + the stop grace and slack


def test_the_script_is_plain_bash_that_bash_accepts(tmp_path: Path) -> None:
    probe = Probe(command=("true",))
    job = _job(tmp_path, ("true",), env=tuple(AWKWARD.items()), probe=probe)
    job.files.script.write_text(render(job))
    assert render(job).startswith("#!/bin/bash\n")
    check = subprocess.run(["bash", "-n", str(job.files.script)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert os.access(job.files.script, os.R_OK)
