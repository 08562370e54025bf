"""Process identity on this host: a pid with the start time the kernel gives it.

A pid alone names a process only while it lives; once it is reaped the kernel may hand the
number to anything. The start time (``/proc/<pid>/stat`` field 22, clock ticks since boot) does
not repeat for a pid, so ``(pid, start)`` recorded when a process began tells a later reader
whether that same process is still there. Standard library only (the supervisor imports it).
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessId:
    """A process as recorded: its pid and its start time in clock ticks since boot."""

    pid: int
    start: int

    def to_json(self) -> dict[str, int]:
        return {"pid": self.pid, "start": self.start}

    @staticmethod
    def from_json(value: object) -> ProcessId | None:
        if not isinstance(value, dict):
            return None
        return ProcessId(int(value["pid"]), int(value["start"]))


def _stat(pid: int) -> tuple[str, int] | None:
    """The state letter and start time of ``pid``, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = text[text.rfind(")") + 2 :].split()
    return fields[0], int(fields[19])


def start_time(pid: int) -> int | None:
    """The start time of ``pid`` now, or None when it is gone (a zombie counts as gone)."""
    stat = _stat(pid)
    if stat is None or stat[0] in ("Z", "X"):
        return None
    return stat[1]


def this_process() -> ProcessId:
    """The calling process's identity."""
    pid = os.getpid()
    start = start_time(pid)
    assert start is not None  # the caller is alive
    return ProcessId(pid, start)


def identify(pid: int) -> ProcessId | None:
    """The identity of a process just started (None when it already ended)."""
    start = start_time(pid)
    return ProcessId(pid, start) if start is not None else None


def alive(process: ProcessId | None) -> bool:
    """Whether the recorded process is still the one running under its pid."""
    return process is not None and start_time(process.pid) == process.start


def signal_group(leader: ProcessId | None, sig: int) -> bool:
    """Send ``sig`` to the process group ``leader`` leads, only while that very leader lives
    (a reused pid's group is never touched); True when it was sent."""
    if not alive(leader):
        return False
    assert leader is not None
    try:
        os.killpg(leader.pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def signal_process(process: ProcessId | None, sig: int) -> bool:
    """Send ``sig`` to the recorded process while it is still that process."""
    if not alive(process):
        return False
    assert process is not None
    try:
        os.kill(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def wait_gone(processes: list[ProcessId | None], seconds: float) -> bool:
    """Wait up to ``seconds`` for every recorded process to end; True when they all did."""
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in processes):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True


def stop(processes: list[ProcessId | None], grace: float) -> None:
    """SIGTERM each recorded process (its group, for a group leader), SIGKILL what is left
    after ``grace`` seconds."""
    for process in processes:
        if not signal_group(process, signal.SIGTERM):
            signal_process(process, signal.SIGTERM)
    if wait_gone(processes, grace):
        return
    for process in processes:
        if not signal_group(process, signal.SIGKILL):
            signal_process(process, signal.SIGKILL)
    wait_gone(processes, grace)
