"""An execution as a container on this host: the command line of §8.2.

``<runtime> run --rm --name <name> [--network host] [--privileged] [--user <uid>]
[--ulimit memlock=-1:-1] [GPU flags] [-v src:dst[:ro] …] [--device <dev> …] [-e K=V … (sorted)]
[--entrypoint cmd0] <image> [cmd1…] [args…]``

* ``--name`` is the execution's own (deterministic) name, so whoever holds only the record —
  a supervisor at its deadline, a glimmer started again after ``kill -9`` — removes the
  container by name (``<runtime> rm -f <name>``): killing the runtime's client process does
  not stop a container, which the engine runs outside the client's process group;
* ``--user`` carries ``runAsUser`` as the uid a pod's securityContext would run the runner
  as (the image's own group stays), so a test that needs root (``/dev/kmsg``) says so the
  same way on every substrate;
* GPU flags come from the resource names, limits first, then requests: ``nvidia.com/gpu`` or
  ``nvidia.com/mig-*`` give docker ``--gpus all`` and podman/nerdctl the CDI device
  ``nvidia.com/gpu=all``; ``amd.com/gpu`` gives ``/dev/kfd`` and ``/dev/dri``. Always every
  device (§8.2): a host run has no way to ask for fewer;
* every hostPath is a ``-v`` (read-only unless ``readOnly: false``); a ``CharDevice`` path, and
  each character device directly inside a mounted directory, is a ``--device`` as well —
  a bind mount shows a device node, but the container's device cgroup refuses to open it;
* a mount under ``/dev/infiniband`` asks for unlimited memlock (RDMA registers memory);
* Pair and Group tests always use the host's network: their rendezvous addresses are this
  host's loopback addresses;
* nothing follows the image but the test's own command and args: a kind's default image is a
  per-kind tag whose entrypoint runs that kind (contract/images.py), so the image alone says
  what runs, and a test's ``args`` come after the kind, as after ``glimmer-runner <kind>``.

Pure but for the device scan, which is injectable (tests give a fixture tree).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from glimmer.engine.backend import ExecutionSpec, Mount, Resources

RUNTIMES = ("docker", "podman", "nerdctl")  # the order ``auto`` tries them in (§8.1)
RDMA_DEVICES = "/dev/infiniband"
NVIDIA_GPU = "nvidia.com/gpu"
NVIDIA_MIG_PREFIX = "nvidia.com/mig-"
AMD_GPU = "amd.com/gpu"
AMD_DEVICES = ("/dev/kfd", "/dev/dri")
NETWORKED_SCOPES = ("Pair", "Group")
NAME_PREFIX = "glimmer-"
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]")

DeviceScan = Callable[[str], Sequence[str]]
"""The character devices at a host path: the path itself when it is one, those directly inside
it when it is a directory, none otherwise."""


@dataclass(frozen=True)
class ContainerRuntime:
    """A container runtime (``name``: docker, podman or nerdctl) and the program run for it."""

    name: str
    executable: str

    def __post_init__(self) -> None:
        if self.name not in RUNTIMES:
            raise ValueError(f"unknown container runtime {self.name!r}: one of {RUNTIMES}")

    def info_argv(self) -> list[str]:
        """Asks the runtime's engine whether it answers (the client alone proves nothing)."""
        return [self.executable, "info"]

    def remove_argv(self, container: str) -> list[str]:
        """Stops and removes the container ``container`` (an error when there is none)."""
        return [self.executable, "rm", "-f", container]

    def run_argv(self, spec: ExecutionSpec, scan: DeviceScan | None = None) -> list[str]:
        """The command line that runs ``spec`` as a container (module docstring)."""
        return container_argv(self, spec, scan or char_devices)


def container_name(spec: ExecutionSpec) -> str:
    """The container's name: the execution's, which is unique per run, test, node, attempt and
    role, and the namespace's, in the characters a container name may hold."""
    return NAME_PREFIX + _NOT_IN_NAME.sub("-", f"{spec.namespace or 'default'}-{spec.name}")


def char_devices(host_path: str) -> list[str]:
    """:data:`DeviceScan` of this host. A directory is scanned one level deep and symlinks in it
    are not followed: device directories (``/dev/infiniband``, ``/dev/dri``) are flat, and a
    mount of ``/sys`` or ``/proc`` must not walk a pseudo-filesystem of a million entries."""
    try:
        mode = os.stat(host_path).st_mode
    except OSError:
        return []
    if stat.S_ISCHR(mode):
        return [host_path]
    if not stat.S_ISDIR(mode):
        return []
    found = []
    try:
        with os.scandir(host_path) as entries:
            for entry in entries:
                try:
                    if stat.S_ISCHR(entry.stat(follow_symlinks=False).st_mode):
                        found.append(entry.path)
                except OSError:
                    continue
    except OSError:
        return []
    return sorted(found)


def gpu_flags(runtime: str, resources: Resources) -> list[str]:
    """The GPU flags of the resource names, limits first, then requests, each group once."""
    groups: list[list[str]] = []
    for name, _quantity in (*resources.limits, *resources.requests):
        if name == NVIDIA_GPU or name.startswith(NVIDIA_MIG_PREFIX):
            group = ["--gpus", "all"] if runtime == "docker" else ["--device", "nvidia.com/gpu=all"]
        elif name == AMD_GPU:
            group = [flag for device in AMD_DEVICES for flag in ("--device", device)]
        else:
            continue
        if group not in groups:
            groups.append(group)
    return [flag for group in groups for flag in group]


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def asks_memlock(spec: ExecutionSpec) -> bool:
    """Whether the runner gets unlimited memlock: it mounts something under /dev/infiniband,
    of the host or at that path (RDMA registers memory, §8.2)."""
    return any(
        _under(m.path, RDMA_DEVICES) or _under(m.host_path, RDMA_DEVICES) for m in spec.mounts
    )


def _volume(mount: Mount) -> str:
    return f"{mount.host_path}:{mount.path}" + (":ro" if mount.read_only else "")


def _mount_devices(mount: Mount, scan: DeviceScan) -> list[str]:
    """The ``--device`` values of one mount, each device where the mount puts it."""
    devices = list(scan(mount.host_path))
    if mount.host_type == "CharDevice" and mount.host_path not in devices:
        # Declared a device, passed as one even where this host lacks it: the runtime then
        # refuses to start, as a kubelet refuses a hostPath of the wrong type.
        devices.insert(0, mount.host_path)
    values = []
    for device in devices:
        inside = mount.path
        if device != mount.host_path:
            inside = mount.path.rstrip("/") + device[len(mount.host_path.rstrip("/")) :]
        values.append(device if inside == device else f"{device}:{inside}")
    return values


def container_argv(runtime: ContainerRuntime, spec: ExecutionSpec, scan: DeviceScan) -> list[str]:
    """The §8.2 command line of ``spec`` under ``runtime`` (module docstring)."""
    argv = [runtime.executable, "run", "--rm", "--name", container_name(spec)]
    if spec.scope in NETWORKED_SCOPES or spec.privileges.host_network:
        argv += ["--network", "host"]
    if spec.privileges.privileged:
        argv.append("--privileged")
    if spec.privileges.run_as_user is not None:
        argv += ["--user", str(spec.privileges.run_as_user)]
    if asks_memlock(spec):
        argv += ["--ulimit", "memlock=-1:-1"]
    gpus = gpu_flags(runtime.name, spec.resources)
    argv += gpus
    for mount in spec.mounts:
        argv += ["-v", _volume(mount)]
    # A device already given (amd.com/gpu's /dev/kfd, or one reached by two mounts) once only.
    given = {gpus[i + 1] for i, flag in enumerate(gpus) if flag == "--device"}
    for mount in spec.mounts:
        for device in _mount_devices(mount, scan):
            if device not in given:
                given.add(device)
                argv += ["--device", device]
    for name, value in sorted(spec.env):
        argv += ["-e", f"{name}={value}"]
    if spec.command:
        argv += ["--entrypoint", spec.command[0]]
    return [*argv, spec.image, *spec.command[1:], *spec.args]
