"""The platform overrides of a WorkloadRun (``BuildOverrides`` of specs/certify.md §4.8).

They come from ``overrides/workloadrun.yaml`` (see :func:`overrides_fs`), filled with the run's
values. Besides the usual override fields an item may carry WorkloadRun-only ``preCommand``
lines (wrapped around the trainer command) and ``mpiArgs`` (prepended to the run's own), and two
build-time filters: ``frameworks`` (which frameworks it is for) and ``requires`` (values that must
be set, so that mlnxPerNode 0 opts out of the NIC request).

The user's env wins over a platform value by name, wherever the value sits: a trainer env list in
a job template patch, a container env list in a TrainingRuntime patch, or a ``-x NAME=value``
pair in mpiArgs. Only names the user set are replaced, in place; user-only variables are not
copied in (they reach the workload through the runtime's env).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.certify.platform.env import FORWARD_FLAG, forward_arg
from glimmer.certify.platform.fill import fill
from glimmer.certify.platform.overrides import load_overrides
from glimmer.certify.platform.walk import get_path, training_runtime_jobs

Obj = dict[str, Any]
WORKLOADRUN_FILE = "workloadrun.yaml"
_BUILD_ONLY = ("frameworks", "requires", "preCommand", "mpiArgs")


@dataclass(frozen=True)
class OverrideConfig:
    """What the WorkloadRun resolved before its overrides are built."""

    entry_name: str
    nodes_per_job: int = 1
    gpus_per_node: int = 0
    mlnx_per_node: int = 0
    nic_resource_name: str = ""
    enable_mnnvl: bool = False
    framework_type: str = "torch"
    user_env: Sequence[Mapping[str, Any]] = field(default=())


@dataclass(frozen=True)
class WorkloadRunOverride:
    """An override (``spec``: when, jobTemplate, dependencies, ...) plus the WorkloadRun-only
    ``pre_command`` and ``mpi_args``."""

    spec: Obj
    pre_command: list[str]
    mpi_args: list[str]


def _replace_env(env: list[Any], user: Mapping[str, Obj]) -> None:
    for i, var in enumerate(env):
        if isinstance(var, dict) and var.get("name") in user:
            env[i] = copy.deepcopy(user[var["name"]])


def _user_wins(override: Obj, mpi_args: list[str], user: Mapping[str, Obj]) -> list[str]:
    trainer_env = get_path(
        override, "jobTemplate", "spec", "workload", "trainJob", "trainer", "env"
    )
    if isinstance(trainer_env, list):
        _replace_env(trainer_env, user)
    for dep in override.get("dependencies") or []:
        for job in training_runtime_jobs(dep):
            pod = get_path(job, "template", "spec", "template", "spec") or {}
            for key in ("containers", "initContainers"):
                for container in pod.get(key) or []:
                    if isinstance(container, dict) and isinstance(container.get("env"), list):
                        _replace_env(container["env"], user)
    out = list(mpi_args)
    for i in range(len(out) - 1):
        if out[i] == FORWARD_FLAG:
            name = out[i + 1].split("=", 1)[0]
            if name in user:
                out[i + 1] = forward_arg(user[name])
    return out


def build_overrides(cfg: OverrideConfig) -> list[WorkloadRunOverride]:
    """The platform overrides for a WorkloadRun, in file order."""
    values: Obj = {
        "entryName": cfg.entry_name,
        "runtimeName": f"{cfg.entry_name}-runtime",
        "nodesPerJob": cfg.nodes_per_job,
        "gpusPerNode": cfg.gpus_per_node,
        "mlnxPerNode": cfg.mlnx_per_node,
        "nicResourceName": cfg.nic_resource_name,
        "mnnvl": "1" if cfg.enable_mnnvl else "0",
    }
    user = {str(v.get("name")): dict(v) for v in cfg.user_env}
    out: list[WorkloadRunOverride] = []
    for item in fill(load_overrides(WORKLOADRUN_FILE), values, WORKLOADRUN_FILE):
        if cfg.framework_type not in item.get("frameworks", [cfg.framework_type]):
            continue
        if not all(values.get(name) for name in item.get("requires", [])):
            continue
        spec = {k: v for k, v in item.items() if k not in _BUILD_ONLY}
        spec.setdefault("when", {})
        mpi_args = _user_wins(spec, [str(a) for a in item.get("mpiArgs") or []], user)
        out.append(
            WorkloadRunOverride(spec, [str(c) for c in item.get("preCommand") or []], mpi_args)
        )
    return out
