"""The MPI runtime builder: a worker job running sshd and a launcher job running mpirun.

Ranks run on the workers (mpirun on the launcher starts them over ssh; the launcher hosts no
rank), so user volumes, mounts and init containers go on the worker only. The launcher is a
coordinator with fixed resources; the one user volume it also mounts is spec.config, read-only,
because a rankfile or MCA file that mpiArgs names must be visible where mpirun runs.
"""

from __future__ import annotations

import copy
from typing import Any

from glimmer.certify.platform.runtime import (
    RuntimeConfig,
    apply_builder_gang,
    gpu_resources,
    runtime_object,
)
from glimmer.certify.platform.scripts import (
    FIX_SSH_SCRIPT,
    LAUNCHER_WAIT_SCRIPT,
    WORKER_SSHD_SCRIPT,
)
from glimmer.certify.platform.vocab import (
    ANCESTOR_LABEL,
    ANCESTOR_TRAINER,
    CONFIG_PATH,
    CONFIG_VOLUME,
    DSHM_PATH,
    DSHM_VOLUME,
    FIX_SSH_PERMISSIONS,
    FRAMEWORK_MPI,
    HOSTFILE_DIR,
    HOSTFILE_VOLUME,
    KAI_SCHEDULER,
    LAUNCHER,
    NODE,
    SSH_AUTH_PATH,
    SSH_AUTH_VOLUME,
    SSH_DIR,
    SSH_KEYS_VOLUME,
)

Obj = dict[str, Any]

# The launcher coordinates; it requests no GPU and spec.resources never applies to it.
LAUNCHER_RESOURCES: Obj = {"limits": {"cpu": "2", "memory": "1Gi"}}
SSH_PORT = 22

_SSH_AUTH_MOUNT: Obj = {"name": SSH_AUTH_VOLUME, "mountPath": SSH_AUTH_PATH, "readOnly": True}
_SSH_KEYS_MOUNT: Obj = {"name": SSH_KEYS_VOLUME, "mountPath": SSH_DIR}
_HOSTFILE_MOUNT: Obj = {"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR, "readOnly": True}


def _env(cfg: RuntimeConfig) -> Obj:
    # Env goes on both containers: the launcher's own MPI initialisation reads it. On the worker
    # it reaches sshd only; ranks need "-x NAME=value" (see env.mpi_env_args).
    return {"env": [dict(copy.deepcopy(v)) for v in cfg.env]} if cfg.env else {}


def _worker(cfg: RuntimeConfig) -> Obj:
    container: Obj = {
        "name": NODE,
        "image": cfg.image,
        **_env(cfg),
        "command": ["sh", "-c"],
        "args": [WORKER_SSHD_SCRIPT],
        "readinessProbe": {"tcpSocket": {"port": SSH_PORT}, "initialDelaySeconds": 5},
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
        "resources": gpu_resources(cfg),
        "volumeMounts": [
            dict(_SSH_AUTH_MOUNT),
            {"name": DSHM_VOLUME, "mountPath": DSHM_PATH},
            *(dict(copy.deepcopy(m)) for m in cfg.volume_mounts),
        ],
    }
    pod: Obj = {
        "restartPolicy": "OnFailure",
        "containers": [container],
        "volumes": [
            {"name": DSHM_VOLUME, "emptyDir": {"medium": "Memory"}},
            *(dict(copy.deepcopy(v)) for v in cfg.volumes),
        ],
    }
    if cfg.init_containers:
        pod["initContainers"] = [dict(copy.deepcopy(c)) for c in cfg.init_containers]
    job: Obj = {"name": NODE, "template": {"spec": {"template": {"spec": pod}}}}
    apply_builder_gang(cfg, job)
    return job


def _config_volume(cfg: RuntimeConfig) -> Obj | None:
    for volume in cfg.volumes:
        if volume.get("name") == CONFIG_VOLUME:
            return dict(copy.deepcopy(volume))
    return None


def _launcher(cfg: RuntimeConfig) -> Obj:
    kai = cfg.gang_scheduler_name == KAI_SCHEDULER
    init: Obj = {
        "name": FIX_SSH_PERMISSIONS,
        "image": cfg.image,
        "command": ["sh", "-c"],
        "args": [FIX_SSH_SCRIPT + ("\n" + LAUNCHER_WAIT_SCRIPT if kai else "")],
        "volumeMounts": [dict(_SSH_AUTH_MOUNT), dict(_SSH_KEYS_MOUNT)]
        + ([dict(_HOSTFILE_MOUNT)] if kai else []),
    }
    mounts: list[Obj] = [dict(_SSH_AUTH_MOUNT), dict(_SSH_KEYS_MOUNT)]
    volumes: list[Obj] = [{"name": SSH_KEYS_VOLUME, "emptyDir": {}}]
    config = _config_volume(cfg)
    if config is not None:
        mounts.append({"name": CONFIG_VOLUME, "mountPath": CONFIG_PATH, "readOnly": True})
        volumes.append(config)
    container: Obj = {
        "name": NODE,
        "image": cfg.image,
        **_env(cfg),
        "resources": copy.deepcopy(LAUNCHER_RESOURCES),
        "volumeMounts": mounts,
    }
    pod: Obj = {
        "restartPolicy": "OnFailure",
        "initContainers": [init],
        "containers": [container],
        "volumes": volumes,
    }
    job: Obj = {
        "name": LAUNCHER,
        "template": {
            "metadata": {"labels": {ANCESTOR_LABEL: ANCESTOR_TRAINER}},
            "spec": {"template": {"spec": pod}},
        },
    }
    if not kai:
        # Outside KAI the launcher simply waits for the workers to be Ready.
        job["dependsOn"] = [{"name": NODE, "status": "Ready"}]
    apply_builder_gang(cfg, job)
    return job


def build_mpi_runtime(cfg: RuntimeConfig) -> Obj:
    """A TrainingRuntime for MPI workloads: MPI mlPolicy, a "node" worker job (sshd, IPC_LOCK,
    an ssh readiness probe, cfg.env) and a "launcher" job (mpirun, ssh key setup, cfg.env)."""
    spec: Obj = {
        "mlPolicy": {
            "numNodes": 1,
            "mpi": {
                "mpiImplementation": "OpenMPI",
                "numProcPerNode": cfg.gpus_per_node,
                "sshAuthMountPath": SSH_AUTH_PATH,
            },
        },
        "template": {
            "spec": {
                "network": {"publishNotReadyAddresses": True},
                "replicatedJobs": [_worker(cfg), _launcher(cfg)],
                "successPolicy": {"operator": "All", "targetReplicatedJobs": [LAUNCHER]},
            }
        },
    }
    return runtime_object(cfg, FRAMEWORK_MPI, spec)
