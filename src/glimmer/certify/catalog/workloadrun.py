"""Rendering a WorkloadRun (specs/certify.md §3.5 buildWorkflowSpec): the runtime from the
platform builders, the trainer command per framework, the platform's WorkloadRun overrides then
the user's, and the construction-time scheduling contract, validated as the controller would.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from glimmer.api.certify.workloadrun import WorkloadRun, WorkloadTestScale
from glimmer.certify.catalog.build import BUILDERS
from glimmer.certify.catalog.gpu import MNNVL_BY_DEFAULT, node_defaults
from glimmer.certify.catalog.render import Context, context, finish, wire
from glimmer.certify.platform.env import base_nccl_env_vars, merge_env_vars, mpi_env_args
from glimmer.certify.platform.errors import PlatformError, owned_by
from glimmer.certify.platform.labels import label_key, label_path
from glimmer.certify.platform.overrides import apply_overrides
from glimmer.certify.platform.runtime import RuntimeConfig
from glimmer.certify.platform.transforms import apply_workload_run_scheduling
from glimmer.certify.platform.validate_gang import validate_resolved_job_template
from glimmer.certify.platform.validate_workload import (
    validate_workload_init_containers,
    validate_workload_volumes,
)
from glimmer.certify.platform.vocab import (
    CONFIG_PATH,
    CONFIG_VOLUME,
    LAUNCHER,
    NODE,
    TRAINER_GROUP,
    TRAINING_RUNTIME,
    WORKLOAD_RUN_LABEL,
    WORKLOAD_RUN_PATCH_MANAGER,
)
from glimmer.certify.platform.when import MatchContext, matches_when
from glimmer.certify.platform.workloadrun_overrides import OverrideConfig, build_overrides

Obj = dict[str, Any]
DEFAULT_TIMEOUT = "24h"
MPI_LEADING = ["--allow-run-as-root", "--mca", "plm_rsh_args"]
SSH_OPTIONS = "-o StrictHostKeyChecking=no -o ConnectionAttempts=10"


def _trainer(run: WorkloadRun, env: list[Obj], gpus: int, platform_mpi_args: list[str]) -> Obj:
    fw = run.spec.framework
    if fw.torch is not None:
        entry = ["-m", fw.torch.module] if fw.torch.module else [str(fw.torch.script)]
        return {"command": ["torchrun"], "args": entry + list(fw.torch.args or [])}
    if fw.mpi is not None:
        # Platform mpiArgs lead the user's, so the user's -x pairs (read last by mpirun) win.
        mpi_args = platform_mpi_args + list(fw.mpi.mpi_args or [])
        args = ["-N", str(gpus), *MPI_LEADING, SSH_OPTIONS, *mpi_env_args(env, mpi_args)]
        args += [*mpi_args, fw.mpi.binary, *(fw.mpi.args or [])]
        return {"command": ["timeout", "3600", fw.mpi.mpirun_path], "args": args}
    assert fw.exec is not None
    return {"command": list(fw.exec.command), "args": list(fw.exec.args or [])}


def wrap_pre_command(trainer: Obj, lines: list[str]) -> Obj:
    """The trainer with its command run by ``/bin/bash -c`` after the platform's lines, through
    ``exec`` so the workload keeps the container's signals; every word shell-quoted."""
    if not lines:
        return trainer
    original = [*trainer.get("command", []), *trainer.get("args", [])]
    script = "\n".join([*lines, f"exec {shlex.join(original)}"])
    return {**trainer, "command": ["/bin/bash", "-c"], "args": [script]}


def _config(run: WorkloadRun) -> tuple[list[Obj], list[Obj], list[Obj]]:
    """Volumes, mounts and dependencies the config adds (a ConfigMap for inline files)."""
    config = run.spec.config
    if config is None:
        return [], [], []
    name = config.config_map_ref.name if config.config_map_ref else f"{run.name}-config"
    volume = {"name": CONFIG_VOLUME, "configMap": {"name": name, "defaultMode": 0o755}}
    mount = {"name": CONFIG_VOLUME, "mountPath": CONFIG_PATH}
    deps: list[Obj] = []
    if config.inline is not None:
        deps.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name},
                "data": config.inline,
            }
        )
    return [volume], [mount], deps


def _runtime_patches(run: WorkloadRun) -> list[Obj]:
    # MPI registers both targets so that placement reaches the launcher too.
    jobs: list[Obj] = [{"name": NODE}]
    if run.spec.framework.kind == "mpi":
        jobs.append({"name": LAUNCHER})
    return [
        {
            "manager": WORKLOAD_RUN_PATCH_MANAGER,
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": jobs}}},
        }
    ]


def build_workload_run_spec(run: WorkloadRun, ctx: Context) -> tuple[Obj, list[Any]]:
    """The WorkloadRun's Workflow spec, overrides applied and the scheduling contract checked."""
    s = run.spec
    framework = s.framework.kind
    volumes, mounts = [dict(v) for v in s.volumes or []], [dict(m) for m in s.volume_mounts or []]
    inits = [dict(c) for c in s.init_containers or []]
    validate_workload_volumes(volumes, mounts, framework, s.config is not None)
    validate_workload_init_containers(inits)
    # No architecture known: the unknown row (4 GPUs, no NICs).
    defaults = node_defaults(ctx.gpu_architecture, ctx.platform)
    gpus = defaults.gpus_per_node if s.gpus_per_node is None else s.gpus_per_node
    mlnx = defaults.mlnx_per_node if s.mlnx_per_node is None else s.mlnx_per_node
    mnnvl = (
        s.enable_mnnvl if s.enable_mnnvl is not None else ctx.gpu_architecture in MNNVL_BY_DEFAULT
    )
    env = merge_env_vars(base_nccl_env_vars(mnnvl), [wire(v) for v in s.env or []])
    config_volumes, config_mounts, deps = _config(run)
    scale = s.orchestration.test_scale if s.orchestration else None
    nodes = 1 if scale == WorkloadTestScale.INTRA_NODE else s.num_nodes
    gs = wire(s.gang_scheduler) or {}
    cfg = RuntimeConfig(
        entry_name=run.name,
        image=s.image,
        nodes_per_job=nodes,
        gpus_per_node=gpus,
        env=env,
        volumes=volumes + config_volumes,
        volume_mounts=mounts + config_mounts,
        init_containers=inits,
        resources=wire(s.resources),
        gang_scheduler_name=gs.get("schedulerName", ""),
        gang_scheduler_queue=gs.get("queue", ""),
        gang_scheduler_queue_label_key=gs.get("queueLabelKey", ""),
    )
    runtime = BUILDERS[framework](cfg)
    match = MatchContext(ctx.platform, ctx.gpu_architecture)
    platform = build_overrides(
        OverrideConfig(
            entry_name=run.name,
            nodes_per_job=nodes,
            gpus_per_node=gpus,
            mlnx_per_node=mlnx,
            nic_resource_name=s.nic_resource_name or "",
            enable_mnnvl=mnnvl,
            framework_type=framework,
            user_env=[wire(v) for v in s.env or []],
        )
    )
    # Pre-template: matching mpiArgs lead the run's own; post-template: preCommand wraps it.
    matching = [o for o in platform if matches_when(o.spec.get("when"), match)]
    leading = [arg for o in matching for arg in o.mpi_args]
    lines = [line for o in matching for line in o.pre_command]
    trainer = {
        "image": s.image,
        **wrap_pre_command(_trainer(run, env, gpus, leading), lines),
        "numNodes": nodes,
        "numProcPerNode": max(gpus, 1),
    }
    job_spec: Obj = {
        "nodeHealthMonitor": {"cel": {"expression": "node.spec.unschedulable == true"}},
        "workload": {
            "trainJob": {
                "runtimeRef": {
                    "apiGroup": TRAINER_GROUP,
                    "kind": TRAINING_RUNTIME,
                    "name": f"{run.name}-runtime",
                },
                "runtimePatches": _runtime_patches(run),
                "trainer": trainer,
            }
        },
    }
    for field, value in (
        ("goodputMeasurement", s.goodput_measurement),
        ("bandwidthMeasurement", s.bandwidth_measurement),
    ):
        if value is not None:
            job_spec[field] = wire(value)
    if s.checkpoint is not None:
        pvc = f"{run.name}-checkpoint-pvc"
        claim: Obj = {
            "accessModes": ["ReadWriteMany"],
            "resources": {"requests": {"storage": s.checkpoint.storage_size}},
        }
        if s.checkpoint.storage_class_name:
            claim["storageClassName"] = s.checkpoint.storage_class_name
        deps.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": pvc},
                "spec": claim,
            }
        )
        job_spec["checkpoint"] = {"pvcName": pvc, "maxRestarts": s.checkpoint.max_restarts}
    orch = s.orchestration
    execution: Obj = {
        "timeoutPerJob": (
            orch.timeout_per_job if orch and orch.timeout_per_job else DEFAULT_TIMEOUT
        )
    }
    if orch and orch.max_concurrent:
        execution["maxConcurrent"] = orch.max_concurrent
    spec: Obj = {
        "dependencies": [runtime, *deps],
        "jobTemplate": {"spec": job_spec},
        "orchestration": {
            "execution": execution,
            "iterations": (orch.repeat_count if orch else None) or 1,
        },
    }
    if scale == WorkloadTestScale.INTRA_RACK:
        spec["orchestration"]["topology"] = {
            "topologyKey": "nvidia.com/gpu.clique",
            "strictDomain": True,
        }
    if s.thresholds:
        spec["validation"] = {
            "performance": {"enabled": True, "thresholds": {"thresholds": dict(s.thresholds)}}
        }
    # The platform's overrides first, then the user's (specs/certify.md §3.5 step 10); an error
    # in one of the user's names it (spec.overrides[i]), one in the platform's does not.
    user = [wire(o) for o in s.overrides or []]
    fields = [None] * len(platform) + [f"spec.overrides[{i}]" for i in range(len(user))]
    spec, applied = apply_overrides(spec, [o.spec for o in platform] + user, match, fields)
    try:
        spec = apply_workload_run_scheduling(
            spec, wire(s.gang_scheduler), wire(s.workload_metadata)
        )
        spec["jobTemplate"]["spec"] = validate_resolved_job_template(
            spec["jobTemplate"]["spec"], spec["dependencies"], spec.get("gangScheduler")
        )
    except PlatformError as e:
        raise _blame_scheduling(e, run, user) from None
    return spec, applied


def _blame_scheduling(e: PlatformError, run: WorkloadRun, user: list[Obj]) -> PlatformError:
    """A workload-label or gang-scheduling error of the rendered Workflow, blamed on the field of
    the WorkloadRun the value came from: the run's own label, else the last user override that
    writes workload labels, else the gang scheduler (whose queue label is inserted)."""
    s = run.spec
    key = label_key(e)
    if key is not None:
        own = (s.workload_metadata.labels if s.workload_metadata else None) or {}
        if key in own:
            owned_by(e, label_path("spec.workloadMetadata.labels", key))
            return e
        writers = [i for i, o in enumerate(user) if "workloadMetadata" in json.dumps(o)]
        if writers:
            owned_by(e, f"spec.overrides[{writers[-1]}]")
            return e
    owned_by(e, "spec.gangScheduler" if s.gang_scheduler else "spec.workloadMetadata")
    return e


def render_workload_run(run: WorkloadRun, platform: str = "", gpu: str = "") -> list[Obj]:
    """The WorkloadRun's objects: its dependencies and its TrainJob."""
    selector = run.spec.target.node_selector if run.spec.target else None
    ctx = context(platform, gpu, selector)
    try:
        spec, applied = build_workload_run_spec(run, ctx)
    except PlatformError as e:
        e.location.obj = e.location.obj or f"WorkloadRun/{run.name}"
        raise
    owner = {WORKLOAD_RUN_LABEL: run.name}
    secrets = [wire(p) for p in run.spec.image_pull_secrets or []]
    return finish(spec, run.name, run.metadata.namespace, owner, ctx, applied, secrets)
