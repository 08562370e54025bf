"""A small world for the local substrate's tests: a fake runner program (a real process that
prints ``key=value`` lines and a marker, optionally sleeps, appends a start mark to a file and
exits with a given code), tests and a profile over it, and a LocalBackend under ``tmp_path``.
Nothing here touches a GPU or anything outside ``tmp_path``."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.common.drivers import drive_wall_clock
from glimmer.backends.local.backend import LocalBackend
from glimmer.backends.local.procs import ProcessId, alive
from glimmer.engine.reconciler import Engine

API = "burnin.glimmer.ai/v1alpha1"
NODE = "host-000"
POLL = 0.05  # seconds between passes of the wall-clock driver

RUNNER = """\
import os, signal, sys, time
env = os.environ
marks = env.get("FAKE_MARKS")
if marks:
    with open(marks, "a") as f:
        f.write(f"{env.get('FAKE_TEST', '?')} a{env.get('BURNIN_ATTEMPT', '?')}\\n")
if env.get("FAKE_IGNORE_TERM"):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if env.get("FAKE_CHILD"):  # a child of its own in the runner's group (left behind if unkilled)
    import subprocess
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(env["FAKE_CHILD"], "w") as f:
        f.write(str(child.pid))
for name in env.get("FAKE_PRINT_ENV", "").split(","):
    if name:
        print(f"env.{name}={env.get(name, '<unset>')}")
if env.get("FAKE_PRINT_MEMLOCK"):
    import resource
    print("memlock=%d" % resource.getrlimit(resource.RLIMIT_MEMLOCK)[0])
print("started cwd=" + os.getcwd(), flush=True)
time.sleep(float(env.get("FAKE_SLEEP", "0")))
print(f"miscompares={env.get('FAKE_MISCOMPARES', '0')}")
code = int(env.get("FAKE_EXIT", "0"))
print("GPU_BURN_PASS" if code == 0 else "GPU_BURN_FAIL")
sys.exit(code)
"""

GATE = {"metric": "miscompares", "comparison": "Equal", "value": "0"}


def runner_command(tmp_path: Path) -> list[str]:
    """The fake runner, written under ``tmp_path``; the backend appends the kind."""
    script = tmp_path / "fake_runner.py"
    script.write_text(RUNNER)
    return [sys.executable, str(script)]


def fake_test(
    name: str,
    *,
    sleep: float = 0.1,
    miscompares: int = 0,
    exit_code: int = 0,
    marks: Path | None = None,
    duration: int = 60,
    **env: str,
) -> BurnInTestSpec:
    """A gated gpu-burn test whose runner is the fake one, behaving as told."""
    values = {
        "FAKE_TEST": name,
        "FAKE_SLEEP": str(sleep),
        "FAKE_MISCOMPARES": str(miscompares),
        "FAKE_EXIT": str(exit_code),
        **env,
    }
    if marks is not None:
        values["FAKE_MARKS"] = str(marks)
    return BurnInTestSpec.model_validate(
        {
            "kind": "gpu-burn",
            "durationSeconds": duration,
            "thresholds": [GATE],
            "runner": {"env": [{"name": k, "value": v} for k, v in values.items()]},
        }
    )


def profile(tests: Sequence[str], name: str = "prof", **spec: Any) -> BurnInProfile:
    return BurnInProfile.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInProfile",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"tests": [{"testRef": t} for t in tests], **spec},
        }
    )


def run_object(name: str = "run", targets: Sequence[str] = (NODE,), **spec: Any) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"profileRef": "prof", "target": {"nodeNames": list(targets)}, **spec},
        }
    )


def backend(
    state: Path,
    command: Sequence[str],
    tests: Mapping[str, BurnInTestSpec],
    **kwargs: Any,
) -> LocalBackend:
    return LocalBackend(
        state,
        kwargs.pop("node_name", NODE),
        runner_command=command,
        profiles={"prof": profile(list(tests), **kwargs.pop("profile_spec", {}))} if tests else {},
        tests=dict(tests),
        stop_grace=kwargs.pop("stop_grace", 0.2),
        **kwargs,
    )


def drive(b: LocalBackend, name: str = "run", poll: float = POLL) -> BurnInRun:
    final = drive_wall_clock(b, Engine(b), "default", name, poll=poll, max_passes=2_000)
    assert final is not None
    return final


def recorded_processes(b: LocalBackend) -> list[ProcessId]:
    """Every supervisor and runner any execution record names."""
    found = []
    for path in b.processes.records.all():
        record = path.read() or {}
        for key in ("supervisor", "runner"):
            process = ProcessId.from_json(record.get(key))
            if process is not None:
                found.append(process)
    return found


def left_alive(processes: Sequence[ProcessId], wait: float = 5.0) -> list[ProcessId]:
    """The processes still alive after up to ``wait`` seconds (a supervisor exits just after
    writing its last record)."""
    until = time.monotonic() + wait
    while any(alive(p) for p in processes) and time.monotonic() < until:
        time.sleep(0.02)
    return [p for p in processes if alive(p)]


class FastClock:
    """A clock on which ``scale`` engine seconds pass per host second, over the same real
    processes: a deadline of 121 s is enforced after 121/scale host seconds."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.origin = datetime.now(UTC)

    def from_host(self, moment: datetime) -> datetime:
        return self.origin + (moment - self.origin) * self.scale

    def now(self) -> datetime:
        return self.from_host(datetime.now(UTC))

    def host_seconds(self, seconds: float) -> float:
        return seconds / self.scale

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds / self.scale)
