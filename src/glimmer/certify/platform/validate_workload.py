"""Refusing user volumes, mounts and init containers that collide with what the builders or a
Kubeflow Trainer plugin add to the same pod.

A duplicate is otherwise caught at pod creation, after the Workflow and Job exist, with nothing on
the WorkloadRun to say why; and two cases are never caught, because Trainer upserts its own
entries by name and path (the MPI plugin's mpi-ssh-auth, the TrainJobStatus plugin's token), so a
user's mount would silently end up holding SSH keys or a service-account token.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.vocab import (
    CONFIG_PATH,
    CONFIG_VOLUME,
    DSHM_PATH,
    DSHM_VOLUME,
    FRAMEWORK_EXEC,
    FRAMEWORK_MPI,
    FRAMEWORK_TORCH,
    FRAMEWORKS,
    NODE,
    SSH_AUTH_PATH,
    SSH_AUTH_VOLUME,
    SSH_DIR,
    TRAINER_TOKEN_PATH,
    TRAINER_TOKEN_VOLUME,
)
from glimmer.errors import Location

# Rules as data: which framework reserves which names and paths, and why.
# Volume names taken on the pod the user's volumes join.
RESERVED_VOLUMES: dict[str, tuple[str, ...]] = {
    DSHM_VOLUME: FRAMEWORKS,  # the builders' shared-memory volume
    CONFIG_VOLUME: FRAMEWORKS,  # reserved even without spec.config: adding it later stays valid
    SSH_AUTH_VOLUME: (FRAMEWORK_MPI,),  # the Trainer MPI plugin's key Secret
    TRAINER_TOKEN_VOLUME: (FRAMEWORK_TORCH, FRAMEWORK_EXEC),  # on mpi it lands on the launcher
}
# Paths reserved together with every path below them: a mount inside hides the files as surely.
RESERVED_TREES: dict[str, tuple[str, ...]] = {
    SSH_AUTH_PATH: (FRAMEWORK_MPI,),
    SSH_DIR: (FRAMEWORK_MPI,),
    TRAINER_TOKEN_PATH: (FRAMEWORK_TORCH, FRAMEWORK_EXEC),
}
# Paths reserved exactly: nothing built in reads a named file below them.
RESERVED_EXACT: dict[str, tuple[str, ...]] = {DSHM_PATH: FRAMEWORKS}
# The workload container's name on the pod user init containers join (the launcher's own
# fix-ssh-permissions is not reserved: user init containers never reach the launcher).
RESERVED_INIT_CONTAINERS: tuple[str, ...] = (NODE,)


def _in_tree(path: str, root: str) -> bool:
    return path == root or path.startswith(root + "/")


def _refuse(field: str, message: str) -> PlatformError:
    # The field path of the WorkloadRun goes in the Location, so the CLI names its line.
    return PlatformError(message, Location(field=field))


def _check_mount(i: int, mount: Mapping[str, Any], framework: str, has_config: bool) -> None:
    where = f"spec.volumeMounts[{i}]"
    name, raw = str(mount.get("name", "")), str(mount.get("mountPath", ""))
    if name == CONFIG_VOLUME and not has_config:
        raise _refuse(f"{where}.name", f'"{CONFIG_VOLUME}" exists only when spec.config is set')
    if not raw.startswith("/"):
        raise _refuse(f"{where}.mountPath", f'"{raw}" is not an absolute path')
    path = posixpath.normpath(raw)
    exact = dict(RESERVED_EXACT)
    if has_config:
        exact[CONFIG_PATH] = FRAMEWORKS
    for root, frameworks in exact.items():
        if framework in frameworks and path == root:
            raise _refuse(f"{where}.mountPath", f'"{raw}" is reserved on {framework}')
    for root, frameworks in RESERVED_TREES.items():
        if framework in frameworks and _in_tree(path, root):
            raise _refuse(
                f"{where}.mountPath", f'"{raw}" is reserved on {framework} ({root} and below)'
            )


def validate_workload_volumes(
    volumes: Sequence[Mapping[str, Any]],
    mounts: Sequence[Mapping[str, Any]],
    framework: str,
    has_config: bool,
) -> None:
    """Refuse a spec.volumes or spec.volumeMounts entry that collides with a built-in one.

    ``framework`` is torch, mpi or exec; ``has_config`` says whether spec.config is set, which is
    when /config is taken and when a mount may name config-volume at all. A mountPath that is not
    absolute is refused outright: none of the comparisons mean anything for it.
    """
    if framework not in FRAMEWORKS:
        raise _refuse(
            "spec.framework", f"unknown framework {framework!r}: one of {', '.join(FRAMEWORKS)}"
        )
    for i, volume in enumerate(volumes):
        name = str(volume.get("name", ""))
        if framework in RESERVED_VOLUMES.get(name, ()):
            raise _refuse(f"spec.volumes[{i}].name", f'"{name}" is reserved on {framework}')
    for i, mount in enumerate(mounts):
        _check_mount(i, mount, framework, has_config)


def validate_workload_init_containers(init_containers: Sequence[Mapping[str, Any]]) -> None:
    """Refuse a spec.initContainers entry that takes the workload container's name ("node"):
    container names are unique across a pod's init and regular containers."""
    for i, container in enumerate(init_containers):
        name = container.get("name")
        if name in RESERVED_INIT_CONTAINERS:
            raise _refuse(
                f"spec.initContainers[{i}].name", f'"{name}" is the workload container\'s name'
            )
