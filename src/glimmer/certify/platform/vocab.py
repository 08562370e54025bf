"""Names the platform package owns: platforms, frameworks, reserved volumes, paths, containers
and the label keys of the ``certify.glimmer.ai`` group (the seed's ``nvcre.nvidia.com`` names
moved to our group).
"""

from __future__ import annotations

from typing import Final

from glimmer.api.certify.labels import CERTIFY_GROUP
from glimmer.api.certify.labels import MANAGED_BY_KEY as MANAGED_BY_KEY
from glimmer.api.certify.labels import RESERVED_LABEL_PREFIX as RESERVED_LABEL_PREFIX
from glimmer.certify.platform.errors import PlatformError

# Order matters: flag help and error messages list them in this order.
PLATFORMS: Final = (
    "aws",
    "gcp",
    "azure",
    "oci",
    "onprem",
    "togetherai",
    "mistral",
    "forge",
    "nscale",
)

GROUP: Final = CERTIFY_GROUP
MANAGED_BY: Final = "glimmer"
# Labels and annotations of specs/certify.md §1.2, moved from nvcre.nvidia.com to our group.
CERTIFICATION_LABEL: Final = f"{GROUP}/certification"
CATEGORY_DOMAIN_LABEL: Final = f"{GROUP}/category-domain"
CATEGORY_VARIANT_LABEL: Final = f"{GROUP}/category-variant"
WORKLOAD_RUN_LABEL: Final = f"{GROUP}/workload-run"
WORKFLOW_LABEL: Final = f"{GROUP}/workflow"
GROUP_LABEL: Final = f"{GROUP}/group"
JOB_LABEL: Final = f"{GROUP}/job"
DETECTED_PLATFORM_ANNOTATION: Final = f"{GROUP}/detected-platform"
DETECTED_GPU_ANNOTATION: Final = f"{GROUP}/detected-gpu-architecture"
APPLIED_OVERRIDES_ANNOTATION: Final = f"{GROUP}/applied-overrides"
CATALOG_PATCH_MANAGER: Final = f"{GROUP}/catalog"
CONTROLLER_PATCH_MANAGER: Final = f"{GROUP}/controller"
WORKLOAD_RUN_PATCH_MANAGER: Final = f"{GROUP}/workloadrun"

TRAINER_GROUP: Final = "trainer.kubeflow.org"
TRAINER_API_VERSION: Final = f"{TRAINER_GROUP}/v1alpha1"
TRAINING_RUNTIME: Final = "TrainingRuntime"
CLUSTER_TRAINING_RUNTIME: Final = "ClusterTrainingRuntime"
TRAIN_JOB: Final = "TrainJob"
ANCESTOR_LABEL: Final = "trainer.kubeflow.org/trainjob-ancestor-step"
ANCESTOR_TRAINER: Final = "trainer"
FRAMEWORK_LABEL: Final = "trainer.kubeflow.org/framework"

FRAMEWORK_TORCH: Final = "torch"
FRAMEWORK_MPI: Final = "mpi"
FRAMEWORK_EXEC: Final = "exec"
FRAMEWORKS: Final = (FRAMEWORK_TORCH, FRAMEWORK_MPI, FRAMEWORK_EXEC)

# Gang scheduling defaults. Only this exact scheduler name triggers the KAI launcher rewrite.
DEFAULT_QUEUE_LABEL_KEY: Final = "kai.scheduler/queue"
DEFAULT_QUEUE: Final = "default-queue"
KAI_SCHEDULER: Final = "kai-scheduler"

# Replicated jobs and containers. "node" must match Trainer's node constant so that
# PET_MASTER_ADDR resolves; every primary container is named "node" too.
NODE: Final = "node"
LAUNCHER: Final = "launcher"
FIX_SSH_PERMISSIONS: Final = "fix-ssh-permissions"
WAIT_FOR_WORKERS: Final = "wait-for-workers"

# Volumes the builders or a Trainer plugin add, and where they mount.
DSHM_VOLUME: Final = "dshm"
DSHM_PATH: Final = "/dev/shm"
SSH_AUTH_VOLUME: Final = "mpi-ssh-auth"
SSH_AUTH_PATH: Final = "/tmp/mpi-ssh-raw"
SSH_KEYS_VOLUME: Final = "ssh-keys"
SSH_DIR: Final = "/root/.ssh"
HOSTFILE_VOLUME: Final = "mpi-hostfile"
HOSTFILE_DIR: Final = "/etc/mpi"
CONFIG_VOLUME: Final = "config-volume"
CONFIG_PATH: Final = "/config"
TRAINER_TOKEN_VOLUME: Final = "kubeflow-trainer-token"
TRAINER_TOKEN_PATH: Final = "/var/run/secrets/kubeflow/trainer"


def names() -> list[str]:
    """Every valid platform name, in the order used in flag help and error messages."""
    return list(PLATFORMS)


def names_list() -> str:
    """The valid platform names joined with ", " for flag help and error messages."""
    return ", ".join(names())


def validate_flag(name: str) -> None:
    """Check a ``--platform`` value. Empty is allowed (no platform given).

    The message derives the valid names from :func:`names`, so it always matches the set.
    """
    if name and name not in names():
        raise PlatformError(f'invalid --platform "{name}": must be one of {names_list()}')
