"""A played workload pod never outlives what started it: a pod left waiting by a killed test or
bench (its kubelet stand-in gone, or its cluster's directory removed) exits by itself instead of
polling for ever. Hundreds of such pods were once left behind by one killed 1,000-node bench."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tools.k8s_standin import trainer_play

ROOT = Path(__file__).resolve().parents[3]
GONE_WITHIN_S = 60.0  # a bound for the wait, never a measured figure


def _play(plan: Path, role: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tools.k8s_standin.trainer_play", str(plan), role],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie nobody reaped has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_pod_waiting_for_its_plan_exits_when_the_cluster_directory_is_removed(
    tmp_path: Path,
) -> None:
    cluster = tmp_path / "trainer"
    cluster.mkdir()
    pod = _play(cluster / "job.json", "lead")
    try:
        time.sleep(0.3)  # let it start waiting (it would wait the same had it not)
        assert pod.poll() is None
        shutil.rmtree(cluster)
        _, err = pod.communicate(timeout=GONE_WITHIN_S)
    finally:
        pod.kill()
    assert pod.returncode == trainer_play.ORPHANED
    assert "orphaned" in err


def test_a_follower_exits_when_the_process_that_started_it_is_killed(tmp_path: Path) -> None:
    plan = tmp_path / "job.json"
    plan.write_text(json.dumps({"job": "j", "text": "", "exit_code": 0, "seconds": 0}))
    # A stand-in kubelet, reduced to what matters: it starts the follower in a session of its
    # own (as processes.py does) and is then SIGKILLed, as a killed test's cluster is.
    starter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-m', 'tools.k8s_standin.trainer_play', "
            f"{str(plan)!r}, 'follow'], start_new_session=True)\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(600)\n",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    follower = 0
    try:
        assert starter.stdout is not None
        follower = int(starter.stdout.readline())
        time.sleep(0.3)
        assert _alive(follower), "the follower waits for its lead while its kubelet lives"
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=GONE_WITHIN_S)
        assert _wait_gone(follower), "the follower outlived the process that started it"
    finally:
        starter.kill()
        if follower and _alive(follower):
            os.kill(follower, signal.SIGKILL)


def test_a_follower_still_ends_with_its_lead(tmp_path: Path) -> None:
    plan = tmp_path / "job.json"
    plan.write_text(
        json.dumps({"job": "j", "text": "a\nb\n", "exit_code": 3, "seconds": 0, "follower_exit": 0})
    )
    follower = _play(plan, "follow")
    lead = _play(plan, "lead")
    out, _ = lead.communicate(timeout=GONE_WITHIN_S)
    follower.communicate(timeout=GONE_WITHIN_S)
    assert (lead.returncode, out) == (3, "a\nb\n")
    assert follower.returncode == 0
