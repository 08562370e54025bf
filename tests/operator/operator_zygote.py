"""A process that has imported the operator once and forks it on demand, for a test that
starts the operator dozens of times (the SIGKILL test: 31 starts).

A fresh ``python -m glimmer.operator run`` spends about 2 CPU seconds importing kopf, lightkube
and the engine before its first request (5-10 s of wall time on a busy 2-core machine), and
none of the operator's behaviour happens meanwhile. The zygote imports the operator with the
environment every start is given; each start is then a fork of it that runs
``glimmer.operator``'s ``__main__`` exactly as ``python -m`` does, with its own argv,
environment, working directory and log file: a process of its own that SIGKILL and SIGTERM
reach alone, whose exit code is the one ``python -m`` would have had. The zygote runs no thread
and no event loop when it forks (it asserts so), so each fork is a clean copy; it imports
nothing of the tests (only the standard library and the operator).

Protocol, one JSON object a line each way (the zygote's stdin, then its stdout):
``{"start": {"argv": [...], "env": {...}, "cwd": ..., "log": ...}}`` → ``{"pid": N}``;
``{"wait": N, "timeout": s}`` → ``{"code": C}``: C is None while N still runs after
``timeout`` seconds, and a death by signal is ``-signum``, as subprocess reports it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# What a start imports before its first request (``__main__`` imports the last two lazily).
PRELOAD = ("glimmer.operator.__main__", "glimmer.operator.main", "glimmer.operator.fingerprints")
REAP_POLL = 0.02  # seconds between two looks at a fork that has not ended yet
# Set in the zygote's own environment only (never in a start's): the zygote imports this module
# for zygote_main and must not import the test harness that ForkedOperator builds on.
IN_ZYGOTE = "GLIMMER_IN_OPERATOR_ZYGOTE"


def _exit_code(status: int) -> int:
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _become_operator(start: dict[str, Any]) -> None:
    """In the fork: ``python -m glimmer.operator <argv>`` writing to ``log``. Never returns
    (``os._exit`` with the module's exit code, as the interpreter's exit would give)."""
    import runpy
    import traceback

    code = 1
    try:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the zygote's command pipe is not its own
        out = os.open(start["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.chdir(start["cwd"])
        os.environ.clear()
        os.environ.update(start["env"])
        sys.argv = ["glimmer.operator", *start["argv"]]
        try:
            runpy.run_module("glimmer.operator", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _reap(pid: int, timeout: float) -> int | None:
    until = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return _exit_code(status)
        if time.monotonic() >= until:
            return None
        time.sleep(REAP_POLL)


def zygote_main() -> None:
    """The zygote: import the operator, then fork one per ``start`` and reap on ``wait``."""
    import importlib
    import threading

    for name in PRELOAD:
        importlib.import_module(name)
    assert threading.active_count() == 1, "the zygote must not fork with threads running"
    for line in sys.stdin:
        request = json.loads(line)
        if "start" in request:
            pid = os.fork()
            if pid == 0:
                _become_operator(request["start"])
            answer: dict[str, Any] = {"pid": pid}
        else:
            answer = {"code": _reap(int(request["wait"]), float(request["timeout"]))}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


class Zygote:
    """The zygote as a child process: :meth:`start` forks an operator, :meth:`wait` reaps it."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.env, self.cwd = env, cwd
        code = "from tests.operator.operator_zygote import zygote_main; zygote_main()"
        self.proc = subprocess.Popen(
            [sys.executable, "-u", "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env={**env, IN_ZYGOTE: "1"}, cwd=cwd, text=True,
        )  # fmt: skip

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"the operator zygote exited {self.proc.wait()}")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def start(self, argv: list[str], log: Path) -> int:
        """Fork ``python -m glimmer.operator <argv>``, its output appended to ``log``: its pid."""
        start = {"argv": argv, "env": self.env, "cwd": str(self.cwd), "log": str(log)}
        return int(self._ask({"start": start})["pid"])

    def wait(self, pid: int, timeout: float) -> int | None:
        """The fork's exit code once it has ended, at most ``timeout`` s on (None: running)."""
        code = self._ask({"wait": pid, "timeout": timeout})["code"]
        return None if code is None else int(code)

    def close(self) -> None:
        """End the zygote (its forks are the test's to have stopped first)."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)


if not os.environ.get(IN_ZYGOTE):
    # The test side: an Operator whose starts are the zygote's forks (the SIGKILL tests').
    from tests.operator.conftest import STARTED, Operator, eventually
    from tools.k8s_standin.cluster import StandInCluster

    class ForkedOperator(Operator):
        """:class:`~tests.operator.conftest.Operator` whose starts are forks of ``zygote``: the
        same argv, environment (the zygote's), log file per start and signals; ``pid`` is the
        running fork's (``proc`` stays None)."""

        def __init__(self, cluster: StandInCluster, zygote: Zygote) -> None:
            super().__init__(cluster, name="forked")
            self.zygote = zygote
            self.pid: int | None = None
            self.code: int | None = None  # the fork's exit code, once reaped

        def start(self) -> ForkedOperator:
            self.starts += 1
            argv = ["run", "--kubeconfig", str(self.cluster.kubeconfig), *self.args]
            self.pid, self.code = self.zygote.start(argv, self.log), None
            return self

        def _ended(self) -> bool:
            if self.pid is not None and self.code is None:
                self.code = self.zygote.wait(self.pid, 0)
            return self.pid is None or self.code is not None

        def wait_started(self) -> None:
            eventually(lambda: self._ended() or STARTED in self.output(), f"{self.name} started")

        def kill(self) -> None:
            if self.pid is not None and not self._ended():
                os.kill(self.pid, signal.SIGKILL)
                if self.zygote.wait(self.pid, 30) is None:
                    raise AssertionError(f"operator {self.pid} still running 30 s after SIGKILL")
            self.pid = self.code = None

        def stop(self) -> int | None:
            if self.pid is None:
                return None
            self.wait_started()
            if not self._ended():
                os.kill(self.pid, signal.SIGTERM)
                self.code = self.zygote.wait(self.pid, 30)
                if self.code is None:
                    os.kill(self.pid, signal.SIGKILL)
                    self.code = self.zygote.wait(self.pid, 30)
            code, self.pid, self.code = self.code, None, None
            return code
