"""Building a category's Workflow spec from its catalog entry (specs/certify.md §5.2–§5.4).

The runtime comes from the platform builders (so every rule of the seed holds for catalog runtimes
too), then the entry's own runtime patch, extra dependencies and job template are filled in and
the entry's and the platform's overrides are applied in order.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from glimmer.api.certify.options import CategoryOptions, TestScale
from glimmer.certify.catalog.entries import Entry, platform_overrides
from glimmer.certify.catalog.gpu import config_arch
from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.fill import fill
from glimmer.certify.platform.merge import merge_dependency
from glimmer.certify.platform.overrides import Applied, apply_overrides
from glimmer.certify.platform.runtime import RuntimeConfig, build_exec_runtime, build_torch_runtime
from glimmer.certify.platform.runtime_mpi import build_mpi_runtime
from glimmer.certify.platform.when import MatchContext

Obj = dict[str, Any]

BUILDERS: dict[str, Callable[[RuntimeConfig], Obj]] = {
    "torch": build_torch_runtime,
    "mpi": build_mpi_runtime,
    "exec": build_exec_runtime,
}
DEFAULT_SOURCE_REPO = "https://github.com/NVIDIA/Megatron-LM.git"
# Training container CPU and memory when the owner sets none (specs/certify.md §2.2).
TRAINING_RESOURCES: Obj = {
    "limits": {"cpu": "128", "memory": "800Gi"},
    "requests": {"cpu": "64", "memory": "500Gi"},
}
TOPOLOGY_KEY = "nvidia.com/gpu.clique"


@dataclass(frozen=True)
class BuildConfig:
    """What the owner resolved for one category."""

    platform: str
    gpu_architecture: str
    nodes_per_job: int
    gpus_per_node: int
    mlnx_per_node: int
    enable_mnnvl: bool
    options: CategoryOptions = field(default_factory=CategoryOptions)
    target: Mapping[str, Any] | None = None


def check_parallelism(entry: Entry, nodes: int, gpus: int, arch: str) -> None:
    """Refuse a node count the entry's minimum GPUs or parallelism cannot use."""
    total = nodes * gpus
    par = entry.parallelism(config_arch(arch))
    tp_pp = par["tp"] * par["pp"]
    if total < entry.min_gpus:
        need = -(-entry.min_gpus // max(gpus, 1))
        raise PlatformError(
            f"{entry.ref}: requires at least {entry.min_gpus} GPUs ({nodes} nodes × {gpus} "
            f"GPUs/node = {total}); set nodesPerJob to {need} or higher"
        )
    if total % tp_pp:
        raise PlatformError(f"{entry.ref}: totalGPUs={total} must be divisible by TP×PP={tp_pp}")
    if (total // tp_pp) % par["ep"]:
        raise PlatformError(f"{entry.ref}: DP={total // tp_pp} must be divisible by EP={par['ep']}")


def max_valid_nodes(entry: Entry, available: int, gpus: int, arch: str) -> int:
    """The largest node count up to ``available`` the entry can use; 0 when none."""
    for n in range(available, 0, -1):
        try:
            check_parallelism(entry, n, gpus, arch)
        except PlatformError:
            continue
        return n
    return 0


def template_values(entry: Entry, cfg: BuildConfig) -> Obj:
    """The placeholder values of an entry: defaults, then the owner's options, then the entry's
    own ``values``."""
    o = cfg.options
    diagnose = o.test_scale == TestScale.DIAGNOSE
    values: Obj = {
        "entryName": entry.variant,
        "runtimeName": f"{entry.variant}-runtime",
        "image": entry.data["image"],
        "platform": cfg.platform,
        "gpuArchitecture": cfg.gpu_architecture,
        "nodesPerJob": cfg.nodes_per_job,
        "gpusPerNode": cfg.gpus_per_node,
        "mlnxPerNode": cfg.mlnx_per_node,
        "mnnvl": "1" if cfg.enable_mnnvl else "0",
        "maxBytes": o.max_bytes or "16G",
        "numIterations": o.num_iterations or (5 if diagnose else 100),
        "numCycles": o.num_cycles or (1 if diagnose else 10),
        "maxSteps": 50 if o.max_steps is None else o.max_steps,
        "exitDurationMins": 30 if o.exit_duration_mins is None else o.exit_duration_mins,
        "saveInterval": o.save_interval or 250,
        "saveRetainInterval": o.save_retain_interval or 1000,
        "saveTopK": 1 if o.save_top_k is None else o.save_top_k,
        "storageSize": o.storage_size or "10Ti",
        "enableCheckpoint": "true" if o.enable_checkpoint else "false",
        "sourceRepo": o.source_repo or DEFAULT_SOURCE_REPO,
        "startupStallTimeoutSeconds": o.startup_stall_timeout_seconds or 1200,
        "nicResourceName": o.nic_resource_name or "",
    }
    par = entry.parallelism(config_arch(cfg.gpu_architecture))
    values.update(tp=par["tp"], pp=par["pp"], ep=par["ep"])
    values.update(entry.data.get("values") or {})
    return values


def _runtime(entry: Entry, cfg: BuildConfig, values: Obj) -> Obj:
    resources: Obj | None = None
    if entry.data.get("trainingResources"):
        given = cfg.options.resources
        resources = copy.deepcopy(TRAINING_RESOURCES)
        if given is not None:
            for part in ("limits", "requests"):
                resources[part].update(getattr(given, part) or {})
    rc = RuntimeConfig(
        entry_name=entry.variant,
        image=str(values["image"]),
        nodes_per_job=cfg.nodes_per_job,
        gpus_per_node=cfg.gpus_per_node,
        resources=resources,
    )
    runtime = BUILDERS[entry.framework](rc)
    patch = entry.data.get("runtime")
    return merge_dependency(runtime, fill(patch, values, entry.ref)) if patch else runtime


def _timeout(entry: Entry, o: CategoryOptions) -> str:
    if o.timeout_per_job:
        return o.timeout_per_job
    if o.test_scale == TestScale.DIAGNOSE:
        return "15m"
    return entry.timeout_per_job


def _orchestration(entry: Entry, cfg: BuildConfig) -> Obj:
    o = cfg.options
    execution: Obj = {"timeoutPerJob": _timeout(entry, o)}
    if o.max_concurrent:
        execution["maxConcurrent"] = o.max_concurrent
    orch: Obj = {"execution": execution, "iterations": o.repeat_count or 1}
    if cfg.target is not None:
        orch["target"] = copy.deepcopy(dict(cfg.target))
    if o.test_scale == TestScale.INTRA_RACK:
        orch["topology"] = {"topologyKey": TOPOLOGY_KEY, "strictDomain": True}
    if o.test_scale == TestScale.DIAGNOSE:
        orch["diagnose"] = {"minGroupSize": o.min_group_size or 2, "topologyKey": TOPOLOGY_KEY}
    merged: Obj = merge_dependency(orch, entry.data.get("orchestration") or {})
    return merged


def _overrides(entry: Entry, cfg: BuildConfig, values: Obj) -> list[Obj]:
    mine = list(entry.data.get("overrides") or [])
    # Catalog-only keys: "domains" limits an item to some categories, "requires" to a value
    # that is set (mlnxPerNode 0 opts out of the NIC request altogether).
    theirs = [
        {k: v for k, v in item.items() if k not in ("domains", "requires")}
        for item in platform_overrides(cfg.platform)
        if entry.domain in item.get("domains", [entry.domain])
        and all(values.get(name) for name in item.get("requires", []))
    ]
    filled: list[Obj] = fill(mine + theirs, values, entry.ref)
    return filled


def build_workflow_spec(entry: Entry, cfg: BuildConfig) -> tuple[Obj, list[Applied]]:
    """The category's resolved Workflow spec and the overrides that applied."""
    if not cfg.gpu_architecture:
        raise PlatformError(f"{entry.ref}: GPUArchitecture is required to build the entry")
    check_parallelism(entry, cfg.nodes_per_job, cfg.gpus_per_node, cfg.gpu_architecture)
    values = template_values(entry, cfg)
    deps = [_runtime(entry, cfg, values), *fill(entry.data.get("dependencies") or [], values)]
    spec: Obj = {
        "dependencies": deps,
        "jobTemplate": fill(copy.deepcopy(entry.data["jobTemplate"]), values, entry.ref),
        "orchestration": _orchestration(entry, cfg),
    }
    checkpoint = entry.data.get("checkpoint")
    if cfg.options.enable_checkpoint and checkpoint:
        spec, _ = apply_overrides(spec, [fill(checkpoint, values, entry.ref)], MatchContext())
        if cfg.options.max_restarts:
            spec["jobTemplate"]["spec"]["checkpoint"]["maxRestarts"] = cfg.options.max_restarts
    if cfg.options.thresholds:
        performance: Obj = {
            "enabled": True,
            "thresholds": {"thresholds": dict(cfg.options.thresholds)},
        }
        if cfg.options.measurement_timeout:
            performance["measurementTimeout"] = cfg.options.measurement_timeout
        spec["validation"] = {"performance": performance}
    ctx = MatchContext(cfg.platform, cfg.gpu_architecture)
    return apply_overrides(spec, _overrides(entry, cfg, values), ctx)
