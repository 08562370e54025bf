"""A pod's runner container as a real local process: what to run, with which environment and
working directory, and how it is started and stopped.

There is no container runtime. A container with a ``command`` runs that command (its ``args``
after it). One without runs its image's entrypoint, which the stand-in knows only for glimmer's
own runner images: every per-kind tag's entrypoint is ``python3 -m glimmer.runners.cli <kind>``
(contract/images.py), so it runs ``<this Python> -m glimmer.runners.cli <kind>``, the kind read
from the tag. Any other image without a command cannot run here and says so on the pod
(:class:`CannotRun`), never a silent success.

``python3`` on a pod's PATH is this interpreter (its directory comes first), so a pod's own
``python3 -m ...`` command sees the glimmer installed beside the stand-in. A hostPath volume
is the same host path: a process sees the host's filesystem, so a volume whose mountPath
differs from its path cannot be honoured and is refused.

A pod a simulating controller plays (the Trainer stand-in's workload pods) runs the
:class:`Play` that controller chose instead of its image's command: its volumes are not
mounted, and only its plain ``env`` values are set.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import stat
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from glimmer.contract.images import IMAGES

CANNOT_RUN_IMAGE = "StandInCannotRunImage"
CONFIG_ERROR = "CreateContainerConfigError"
CREATING = "ContainerCreating"
_VAR = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class CannotRun(Exception):
    """The container cannot be started: the waiting ``reason`` and ``message`` for its pod."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class Launch:
    """One container's process: argv, full environment, working directory, user."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    user: int | None = None


def runner_kind(image: str) -> str | None:
    """The kind a glimmer runner image's tag runs (``...glimmer-runner:<release>-<kind>``),
    under any registry a site mirrors it to; None for any other image."""
    last = image.rsplit("/", 1)[-1]
    if "@" in last or ":" not in last:
        return None  # a digest or an untagged name says nothing about the kind
    repository, tag = last.split(":", 1)
    for runner_image in IMAGES:
        if repository != runner_image.repository:
            continue
        for kind in sorted(runner_image.kinds, key=len, reverse=True):
            if tag.endswith(f"-{kind}"):
                return kind
    return None


def expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes' ``$(VAR)`` expansion: a defined variable is replaced, an undefined one
    kept verbatim, ``$$`` is a literal ``$``."""

    def one(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return env[name] if name in env else m.group(0)

    return _VAR.sub(one, text)


def _field(pod: Mapping[str, Any], path: str, pod_ip: str) -> str:
    meta, spec = pod["metadata"], pod.get("spec") or {}
    simple: dict[str, Any] = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace", "default"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
        "status.podIP": pod_ip,
        "status.hostIP": pod_ip,
    }
    if path in simple:
        return str(simple[path] or "")
    m = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
    if m:
        return str((meta.get(m.group(1)) or {}).get(m.group(2), ""))
    raise CannotRun(CONFIG_ERROR, f"fieldRef {path!r} is not supported by the stand-in kubelet")


def container_env(
    pod: Mapping[str, Any], container: Mapping[str, Any], pod_ip: str
) -> dict[str, str]:
    """The container's own variables in order (later duplicates win), each ``$(VAR)``
    expanded against those before it, as the kubelet does."""
    env: dict[str, str] = {}
    for var in container.get("env") or []:
        name = var["name"]
        if "valueFrom" in var:
            source = var["valueFrom"] or {}
            if "fieldRef" not in source:
                kinds = ", ".join(sorted(source)) or "nothing"
                raise CannotRun(CONFIG_ERROR, f"env {name}: valueFrom {kinds} is not supported")
            env[name] = _field(pod, source["fieldRef"].get("fieldPath", ""), pod_ip)
        else:
            env[name] = expand(str(var.get("value") or ""), env)
    return env


def base_env(pod: Mapping[str, Any]) -> dict[str, str]:
    """What a container starts with before its own variables: a PATH led by this Python's
    directory, HOSTNAME as a pod's is, and a HOME and locale so tools behave."""
    spec = pod.get("spec") or {}
    path = os.pathsep.join(
        [os.path.dirname(sys.executable), os.environ.get("PATH", "/usr/bin:/bin")]
    )
    return {
        "PATH": path,
        "HOME": "/root" if os.getuid() == 0 else os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "HOSTNAME": str(spec.get("hostname") or pod["metadata"]["name"]),
    }


def argv_of(container: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, ...]:
    """The process's argv: the command, else the runner image's entrypoint; then the args."""
    command: Sequence[str] = container.get("command") or []
    args: Sequence[str] = container.get("args") or []
    if not command:
        image = str(container.get("image") or "")
        kind = runner_kind(image)
        if kind is None:
            raise CannotRun(
                CANNOT_RUN_IMAGE,
                f"image {image!r} has no command and is not a glimmer runner image: the "
                "stand-in kubelet runs processes, not images, and knows no other entrypoint",
            )
        command = [sys.executable, "-m", "glimmer.runners.cli", kind]
    return tuple(expand(str(a), env) for a in [*command, *args])


_TYPE_CHECKS: dict[str, Callable[[int], bool]] = {
    "Directory": stat.S_ISDIR,
    "File": stat.S_ISREG,
    "Socket": stat.S_ISSOCK,
    "CharDevice": stat.S_ISCHR,
    "BlockDevice": stat.S_ISBLK,
}


def check_volumes(pod: Mapping[str, Any], container: Mapping[str, Any]) -> None:
    """Every mounted hostPath exists as its type says (creating the *OrCreate ones) and is
    mounted at its own path."""
    spec = pod.get("spec") or {}
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        volume = volumes.get(mount.get("name"))
        if volume is None:
            raise CannotRun(CONFIG_ERROR, f"volumeMount {mount.get('name')!r} names no volume")
        host = volume.get("hostPath")
        if host is None:
            raise CannotRun(CONFIG_ERROR, f"volume {volume.get('name')!r} is not a hostPath")
        path, kind = str(host.get("path", "")), str(host.get("type") or "")
        if mount.get("mountPath") != path:
            raise CannotRun(
                CONFIG_ERROR,
                f"volume {volume.get('name')!r}: hostPath {path} mounted at "
                f"{mount.get('mountPath')}; the stand-in's processes see the host's own paths",
            )
        if kind == "DirectoryOrCreate":
            os.makedirs(path, exist_ok=True)
        elif kind == "FileOrCreate" and not os.path.exists(path):
            Path(path).touch()
        elif kind in _TYPE_CHECKS:
            try:
                mode = os.stat(path).st_mode
            except OSError as e:
                raise CannotRun(CREATING, f"MountVolume.SetUp failed for {path}: {e}") from e
            if not _TYPE_CHECKS[kind](mode):
                raise CannotRun(CREATING, f"MountVolume.SetUp failed: {path} is not a {kind}")


def launch_of(
    pod: Mapping[str, Any], container: Mapping[str, Any], pod_ip: str, scratch: Path
) -> Launch:
    """The process the container becomes; ``scratch`` is its working directory when it names
    none (a container's own empty filesystem, as near as a process gets)."""
    check_volumes(pod, container)
    own = container_env(pod, container, pod_ip)
    env = {**base_env(pod), **own}
    argv = argv_of(container, own)
    cwd = Path(container.get("workingDir") or scratch)
    cwd.mkdir(parents=True, exist_ok=True)
    user = (container.get("securityContext") or {}).get("runAsUser")
    if user is not None and int(user) == os.getuid():
        user = None  # already that user: no switch needed (and none possible without root)
    return Launch(argv, env, cwd, None if user is None else int(user))


def not_runnable(launch: Launch) -> str | None:
    """Why the runtime could not exec the container's command, as containerd words it; None
    when it can. Checked before the process starts, so that a missing command reads the same
    with or without the network namespace's ``ip netns exec`` in front of it."""
    program = launch.argv[0] if launch.argv else ""
    if "/" in program:
        found = program if os.access(launch.cwd / program, os.X_OK) else None
    else:
        found = shutil.which(program, path=launch.env.get("PATH", ""))
    if found is None:
        return f'exec: "{program}": executable file not found in $PATH'
    return None


def exit_code(returncode: int) -> int:
    """A container's exit code: a signal N reads 128+N, as a container runtime reports it."""
    return 128 - returncode if returncode < 0 else returncode


@dataclass(frozen=True)
class Play:
    """What a simulated pod runs instead of its command: ``argv`` with ``env`` added to the
    container's, and the file in which the played process may leave the container's
    termination reason (``OOMKilled``)."""

    argv: tuple[str, ...]
    reason_file: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)


# Who decides which pods are played: the pod -> its Play, or None to run it as it says.
Player = Callable[[Mapping[str, Any]], "Play | None"]


def played_launch(
    pod: Mapping[str, Any], container: Mapping[str, Any], play: Play, scratch: Path
) -> Launch:
    """The process of a played container: ``play.argv`` in the scratch folder, with the
    container's plain env values (a played process reads no secret and no field)."""
    env = base_env(pod)
    for var in container.get("env") or []:
        if "valueFrom" not in var:
            env[var["name"]] = expand(str(var.get("value") or ""), env)
    env.update(play.env)
    scratch.mkdir(parents=True, exist_ok=True)
    return Launch(play.argv, env, scratch)


def played_reason(play: Play | None, code: int) -> str:
    """The terminated container's reason: what the played process left, else the runtime's."""
    if play is not None and play.reason_file is not None and play.reason_file.is_file():
        left = play.reason_file.read_text().strip()
        if left:
            return left
    return "Completed" if code == 0 else "Error"


class Process:
    """One started container process, in its own session so that stopping it reaches every
    child it made (a runner's iperf3 or stressapptest)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self._proc = proc

    @property
    def pid(self) -> int:
        return self._proc.pid

    @classmethod
    async def start(cls, launch: Launch, wrap: Sequence[str], log: Path) -> Process:
        """Start ``wrap + argv`` (``wrap`` puts it in its node's network namespace) with
        stdout and stderr both written to ``log``, which starts empty: a new pod of an old
        pod's name has a log of its own, as on a cluster."""
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "wb") as out:
            proc = await asyncio.create_subprocess_exec(
                *wrap,
                *launch.argv,
                env=dict(launch.env),
                cwd=launch.cwd,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                user=launch.user,
            )
        return cls(proc)

    async def wait(self) -> int:
        """The container's exit code once it has exited."""
        return exit_code(await self._proc.wait())

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)

    async def stop(self, grace_seconds: float) -> int:
        """SIGTERM to the whole session, SIGKILL after the grace period; the exit code."""
        if self._proc.returncode is None:
            self._signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self._proc.wait(), timeout=max(grace_seconds, 0.0))
            except TimeoutError:
                self._signal(signal.SIGKILL)
        code = await self.wait()
        # A child that outlived the leader (it ignored SIGTERM) still goes.
        self._signal(signal.SIGKILL)
        return code
