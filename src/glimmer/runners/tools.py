"""Finding and running the external tools a runner wraps.

A tool that is not installed is an Error naming the tool and the package that provides it
(never a Fail: nothing about the part was measured). A tool that outlives its timeout is killed
with its whole process group, so no stray load survives the runner.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from glimmer.runners.outcome import MissingTool


def find_tool(
    tool: str,
    package: str,
    extra_dirs: Iterable[str] = (),
    source: str = "Debian",
    hint: str = "",
) -> str:
    """The executable's path: ``PATH`` first, then ``extra_dirs`` (e.g. a mounted
    /usr/local/dcgm/bin); raises MissingTool naming ``package`` when it is nowhere."""
    extra_dirs = tuple(extra_dirs)
    found = shutil.which(tool)
    if found:
        return found
    for directory in extra_dirs:
        candidate = os.path.join(directory, tool)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    where = ":".join(("PATH", *extra_dirs))
    raise MissingTool(tool, package, source=source, where=where, hint=hint)


@dataclass(frozen=True)
class ToolRun:
    argv: tuple[str, ...]
    exit_code: int  # -1 when it timed out and was killed
    stdout: str
    stderr: str
    timed_out: bool


def run_tool(argv: list[str], timeout: float, env: Mapping[str, str] | None = None) -> ToolRun:
    """Run ``argv`` to completion or ``timeout`` seconds, in its own process group."""
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
        env=None if env is None else dict(env),
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=max(timeout, 0.001))
        return ToolRun(tuple(argv), proc.returncode, out, err, timed_out=False)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        out, err = proc.communicate()
        return ToolRun(tuple(argv), -1, out, err, timed_out=True)


def kill_group(proc: subprocess.Popen[str] | subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group ``proc`` leads (it was started in a new session)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
