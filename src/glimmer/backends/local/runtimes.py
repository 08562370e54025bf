"""Which runtime runs this host's executions: ``--runtime`` (§8.1), resolved.

* ``process``: every runner is a plain process on this host (the backend's default);
* ``docker``, ``podman`` or ``nerdctl``: that container runtime. It must be found on PATH and
  its engine must answer ``<runtime> info`` within :data:`INFO_TIMEOUT` seconds; when it does
  not, each execution is an Error attempt naming the runtime and what it said — never a Fail,
  the hardware was not measured. It is asked again at the next attempt (an engine may come
  up in between); once it has answered, it is not asked again;
* ``auto``: the first of docker, podman and nerdctl found on PATH whose engine answers, else
  plain processes. A client whose engine does not answer is no runtime (a CI machine may have
  a docker CLI and no daemon): ``auto`` falls through it instead of failing every test. It
  decides once per glimmer process, so one run never mixes containers and processes.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from glimmer.backends.local.containers import RUNTIMES, ContainerRuntime

PROCESS = "process"
AUTO = "auto"
CHOICES = (PROCESS, AUTO, *RUNTIMES)
INFO_TIMEOUT = 5.0  # seconds an engine has to answer ``info``
MAX_SAID = 500  # characters of a runtime's stderr kept in a message


@dataclass(frozen=True)
class Unavailable:
    """A container runtime that was asked for and cannot run anything, and why."""

    runtime: str
    message: str


Resolution = ContainerRuntime | Unavailable | None
"""A runtime to run executions with, one that was asked for and cannot, or None: processes."""


def find(name: str, search_path: str | None = None) -> ContainerRuntime | None:
    """The runtime ``name`` when its program is on ``search_path`` (default: PATH)."""
    executable = shutil.which(name, path=search_path)
    return ContainerRuntime(name, executable) if executable else None


def unanswered(runtime: ContainerRuntime, timeout: float = INFO_TIMEOUT) -> str | None:
    """None when the runtime's engine answers ``info``, else what went wrong, in words."""
    asked = f"`{runtime.name} info`"
    try:
        done = subprocess.run(
            runtime.info_argv(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"{asked} gave no answer within {timeout:g}s"
    except OSError as e:
        return f"{asked} could not be run: {e}"
    if done.returncode == 0:
        return None
    said = " ".join(done.stderr.decode(errors="replace").split())[:MAX_SAID]
    return f"{asked} exited {done.returncode}" + (f": {said}" if said else "")


def resolve(
    choice: str, search_path: str | None = None, timeout: float = INFO_TIMEOUT
) -> Resolution:
    """What ``choice`` (one of :data:`CHOICES`) means on this host now (module docstring)."""
    if choice == PROCESS:
        return None
    if choice == AUTO:
        for name in RUNTIMES:
            runtime = find(name, search_path)
            if runtime is not None and unanswered(runtime, timeout) is None:
                return runtime
        return None
    runtime = find(choice, search_path)
    if runtime is None:
        return Unavailable(choice, f"container runtime {choice}: no {choice} program on PATH")
    why = unanswered(runtime, timeout)
    if why is not None:
        return Unavailable(choice, f"container runtime {choice} does not answer: {why}")
    return runtime


class RuntimeChoice:
    """``--runtime`` as given, resolved when first needed and remembered as the module says."""

    def __init__(
        self, choice: str = PROCESS, search_path: str | None = None, timeout: float = INFO_TIMEOUT
    ) -> None:
        if choice not in CHOICES:
            raise ValueError(f"runtime {choice!r}: one of {', '.join(CHOICES)}")
        self.choice = choice
        self.search_path = search_path
        self.timeout = timeout
        self._resolved: Resolution = None
        self._decided = choice == PROCESS

    def current(self) -> Resolution:
        """The runtime new executions run under."""
        if not self._decided:
            resolved = resolve(self.choice, self.search_path, self.timeout)
            self._resolved = resolved
            # An unanswered explicit runtime is asked again next time; anything else is final.
            self._decided = not isinstance(resolved, Unavailable)
        return self._resolved
