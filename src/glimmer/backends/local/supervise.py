"""The supervisor of one execution on this host: ``python -m glimmer.backends.local.supervise
<record>``.

It detaches (a second fork and a new session), so it outlives the glimmer process that started
it: killing that process, even with SIGKILL, stops no measurement. It claims the record under
the record's lock — writing its own pid and start time — only if no supervisor ever claimed it,
so a second supervisor spawned for the same execution (by a process that crashed and came back)
exits without running anything: an attempt is never started twice. Then it runs the runner in
its own process group with stdout and stderr in the log, kills that group at the deadline
(SIGTERM, SIGKILL after the grace; reason ``DeadlineExceeded``), and records the exit code and
the end time. After the runner ends, anything left in its group is killed too, so no runner
process outlives its record. SIGTERM to the supervisor (a delete) stops the runner the same
way. Standard library only: it starts in milliseconds.

Under a container runtime the "runner" is the runtime's client (``docker run …``), whose
container does not live in the client's process group: every stop also removes the container
by the name its launch records (``<runtime> rm -f <name>``), and so does a client that ended
by a signal nobody here sent.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from glimmer.backends.local.procs import ProcessId, identify, this_process
from glimmer.backends.local.records import RecordPath, now_text

DEADLINE_REASON = "DeadlineExceeded"
DEADLINE_MESSAGE = "the runner ran past its deadline of {:g}s and was killed"
REMOVE_TIMEOUT = 30.0  # host seconds a container runtime has to remove a container


def remove_container(launch: dict[str, Any]) -> None:
    """Remove the container a launch ran, when it ran one. A container already gone (``--rm``
    removed it) or a runtime that does not answer is left at that: this is the last resort
    after the runtime's client was stopped."""
    remove = launch.get("remove")
    if not remove:
        return
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(
            remove,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=REMOVE_TIMEOUT,
            check=False,
        )


class Supervisor:
    """One execution's supervisor: claims its record, runs the runner, records its end."""

    def __init__(self, path: RecordPath) -> None:
        self.path = path
        self.runner: ProcessId | None = None
        self.group = 0
        self.grace = 1.0
        self.launch: dict[str, Any] = {}

    def update(self, **changes: Any) -> None:
        with self.path.locked():
            record = self.path.read()
            if record is None:
                return  # deleted meanwhile: nothing to record into
            record.update(changes)
            self.path.write(record)

    def claim(self) -> dict[str, Any] | None:
        """The launch request, when this supervisor is the first to claim the record."""
        with self.path.locked():
            record = self.path.read()
            if record is None or record.get("deleting") or record.get("supervisor") is not None:
                return None  # gone, or another supervisor has (or had) it: never run twice
            record["supervisor"] = this_process().to_json()
            self.path.write(record)
            launch: dict[str, Any] = record["launch"]
            return launch

    def kill_group(self, sig: int) -> None:
        if self.group:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.group, sig)

    def stop_runner(self, pidfd: int | None) -> None:
        """SIGTERM the runner's group, remove its container (if any: a runtime's client passes
        the SIGTERM on, but a container that ignores it outlives the group), SIGKILL the group
        after the grace."""
        self.kill_group(signal.SIGTERM)
        ended = pidfd is not None and bool(select.select([pidfd], [], [], self.grace)[0])
        remove_container(self.launch)
        if not ended:
            self.kill_group(signal.SIGKILL)

    def run(self) -> int:
        launch = self.claim()
        if launch is None:
            return 0
        self.launch = launch
        self.grace = float(launch.get("grace", 1.0))
        deadline = float(launch["deadline"])
        # Until the runner is recorded a delete must not orphan it: SIGTERM waits.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        signal.signal(signal.SIGTERM, self._terminated)
        try:
            if launch.get("cwd"):
                Path(launch["cwd"]).mkdir(parents=True, exist_ok=True)
            with open(self.path.log, "ab") as log:
                child = subprocess.Popen(
                    launch["argv"],
                    env=launch["env"],  # None (a container runtime's client): this process's
                    cwd=launch.get("cwd") or None,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    preexec_fn=_unlimited_memlock if launch.get("memlock") else _runner_child,
                )
        except OSError as e:
            self.update(
                started_at=now_text(),
                finished_at=now_text(),
                exit_code=127,
                reason="StartError",
                message=f"the runner could not be started: {e}",
            )
            return 0
        self.group = child.pid
        self.runner = identify(child.pid)
        started = time.monotonic()
        self.update(runner=self.runner.to_json() if self.runner else None, started_at=now_text())
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        pidfd = os.pidfd_open(child.pid)
        reason = message = ""
        left = deadline - (time.monotonic() - started)
        if not select.select([pidfd], [], [], max(left, 0.0))[0]:
            reason, message = DEADLINE_REASON, DEADLINE_MESSAGE.format(deadline)
            self.stop_runner(pidfd)
        # The runner has ended but is not reaped yet, so its group id cannot be reused: what is
        # left in the group (its own children) is killed before the exit is read.
        self.kill_group(signal.SIGKILL)
        code = child.wait()
        if code < 0 and not reason:
            remove_container(launch)  # the client was killed, not by us: its container lives on
        exit_code = code if code >= 0 else 128 - code
        self.update(finished_at=now_text(), exit_code=exit_code, reason=reason, message=message)
        return 0

    def _terminated(self, signum: int, frame: object) -> None:
        self.stop_runner(None if not self.group else _pidfd(self.group))
        self.kill_group(signal.SIGKILL)
        os._exit(128 + signum)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def _runner_child() -> None:
    # In the runner (after fork, before exec): its own process group, so a deadline kills it
    # and its children and never the supervisor; and SIGTERM deliverable again.
    os.setpgid(0, 0)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _unlimited_memlock() -> None:
    # RDMA registers memory: a mount under /dev/infiniband asks for unlimited memlock (§8.2), as
    # far as this process may raise it (the hard limit needs CAP_SYS_RESOURCE).
    _runner_child()
    for limit in (
        (resource.RLIM_INFINITY,) * 2,
        (resource.getrlimit(resource.RLIMIT_MEMLOCK)[1],) * 2,
    ):
        try:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, limit)
            return
        except (ValueError, OSError):
            continue


def _detach() -> None:
    """Fork again and leave: the grandchild, in a session of its own, is nobody's child the
    starting process must reap, and no signal to the starter's terminal or group reaches it."""
    if os.fork() > 0:
        os._exit(0)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = RecordPath(Path(args[0]))
    _detach()
    return Supervisor(path).run()


if __name__ == "__main__":
    sys.exit(main())
