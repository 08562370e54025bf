"""Runtime builders: the TrainingRuntime dependency a WorkloadRun needs, for torch and exec.

The MPI builder lives in :mod:`glimmer.certify.platform.runtime_mpi`; both share the
:class:`RuntimeConfig`, the GPU resource rule and the builder-side gang scheduling here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glimmer.certify.platform.vocab import (
    ANCESTOR_LABEL,
    ANCESTOR_TRAINER,
    DEFAULT_QUEUE,
    DEFAULT_QUEUE_LABEL_KEY,
    DSHM_PATH,
    DSHM_VOLUME,
    FRAMEWORK_LABEL,
    FRAMEWORK_TORCH,
    NODE,
    TRAINER_API_VERSION,
    TRAINING_RUNTIME,
)

Obj = dict[str, Any]
GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True)
class RuntimeConfig:
    """What a runtime builder needs. Lists hold plain Kubernetes mappings.

    ``image_pull_secrets`` is not placed in the runtime: pull secrets travel in the TrainJob's
    runtime patch.
    """

    entry_name: str
    image: str
    nodes_per_job: int = 1
    gpus_per_node: int = 0
    env: Sequence[Mapping[str, Any]] = ()
    volumes: Sequence[Mapping[str, Any]] = ()
    volume_mounts: Sequence[Mapping[str, Any]] = ()
    init_containers: Sequence[Mapping[str, Any]] = ()
    resources: Mapping[str, Any] | None = None
    image_pull_secrets: Sequence[Mapping[str, Any]] = field(default=())
    gang_scheduler_name: str = ""
    gang_scheduler_queue: str = ""
    gang_scheduler_queue_label_key: str = ""


def _copies(items: Sequence[Mapping[str, Any]]) -> list[Obj]:
    return [dict(copy.deepcopy(item)) for item in items]


def gpu_resources(cfg: RuntimeConfig) -> Obj:
    """The worker container's resources.

    None given: GPU limits and requests only (no CPU or memory, which made pods unschedulable
    off DGX nodes). Given without any mention of the GPU resource: a copy with the GPU count
    added to both. Given with the GPU named anywhere, explicit 0 included: untouched.
    """
    count = str(cfg.gpus_per_node)
    if cfg.resources is None:
        return {"limits": {GPU_RESOURCE: count}, "requests": {GPU_RESOURCE: count}}
    out: Obj = copy.deepcopy(dict(cfg.resources))
    named = any(GPU_RESOURCE in (out.get(part) or {}) for part in ("limits", "requests"))
    if cfg.gpus_per_node > 0 and not named:
        for part in ("limits", "requests"):
            out[part] = {**(out.get(part) or {}), GPU_RESOURCE: count}
    return out


def apply_builder_gang(cfg: RuntimeConfig, replicated_job: Obj) -> None:
    """Put the configured scheduler and queue label on one replicated job the builder made.

    Only when a scheduler is named; pod-template and job-template metadata appear only when a
    label is added, so output without gang scheduling keeps its historical shape.
    """
    if not cfg.gang_scheduler_name:
        return
    key = cfg.gang_scheduler_queue_label_key or DEFAULT_QUEUE_LABEL_KEY
    queue = cfg.gang_scheduler_queue or DEFAULT_QUEUE
    job_template = replicated_job["template"]
    job_template.setdefault("metadata", {}).setdefault("labels", {})[key] = queue
    pod_template = job_template["spec"]["template"]
    pod_template.setdefault("metadata", {}).setdefault("labels", {})[key] = queue
    pod_template["spec"]["schedulerName"] = cfg.gang_scheduler_name


def runtime_object(cfg: RuntimeConfig, framework: str, spec: Obj) -> Obj:
    """The TrainingRuntime envelope named ``<entry>-runtime``."""
    return {
        "apiVersion": TRAINER_API_VERSION,
        "kind": TRAINING_RUNTIME,
        "metadata": {
            "name": f"{cfg.entry_name}-runtime",
            "labels": {FRAMEWORK_LABEL: framework, "app": cfg.entry_name},
        },
        "spec": spec,
    }


def _torch_pod_spec(cfg: RuntimeConfig) -> Obj:
    container: Obj = {"name": NODE, "image": cfg.image}
    if cfg.env:
        container["env"] = _copies(cfg.env)
    container["resources"] = gpu_resources(cfg)
    container["volumeMounts"] = [
        {"name": DSHM_VOLUME, "mountPath": DSHM_PATH},
        *_copies(cfg.volume_mounts),
    ]
    pod: Obj = {
        "terminationGracePeriodSeconds": 30,
        "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [container],
        "volumes": [{"name": DSHM_VOLUME, "emptyDir": {"medium": "Memory"}}, *_copies(cfg.volumes)],
    }
    if cfg.init_containers:
        pod["initContainers"] = _copies(cfg.init_containers)
    return pod


def build_torch_runtime(cfg: RuntimeConfig) -> Obj:
    """A TrainingRuntime for PyTorch distributed training: torch mlPolicy, one "node" job."""
    node_job: Obj = {
        "name": NODE,
        "template": {
            "metadata": {"labels": {ANCESTOR_LABEL: ANCESTOR_TRAINER, "app": cfg.entry_name}},
            "spec": {"template": {"spec": _torch_pod_spec(cfg)}},
        },
    }
    apply_builder_gang(cfg, node_job)
    spec: Obj = {
        "mlPolicy": {
            "numNodes": cfg.nodes_per_job,
            "torch": {"numProcPerNode": cfg.gpus_per_node},
        },
        "template": {"spec": {"replicatedJobs": [node_job]}},
    }
    return runtime_object(cfg, FRAMEWORK_TORCH, spec)


def build_exec_runtime(cfg: RuntimeConfig) -> Obj:
    """A TrainingRuntime for arbitrary command execution: the torch layout (one "node" job,
    torch mlPolicy); the command itself lives in the TrainJob's trainer."""
    return build_torch_runtime(cfg)
