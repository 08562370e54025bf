"""WorkloadRun (``wlr``): an ad-hoc workload (torch, MPI or a command) run like a category.

Spec immutable. Exactly one framework; for torch exactly one of script and module; for the
config, exactly one of inline files and a ConfigMap reference.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar

from pydantic import ConfigDict, Field, model_validator

from glimmer.api.base import Bool, Int32, Wire, item_error
from glimmer.api.certify.certification import IMMUTABLE
from glimmer.api.certify.meta import CertifyResource
from glimmer.api.certify.options import (
    DURATION_PATTERN,
    QUANTITY_PATTERN,
    LocalObjectReference,
    NicResourceName,
)
from glimmer.api.certify.threshold import MEASUREMENT_KEYS, Thresholds
from glimmer.api.certify.types import (
    GangSchedulerSpec,
    LogProfileRef,
    OverrideSpec,
    TargetSpec,
    TypedLocalObjectReference,
    WorkflowRef,
    WorkloadMetadata,
)
from glimmer.api.k8s import Condition, EnvVar, Passthrough, ResourceRequirements


class TorchFramework(Wire):
    """``torchrun`` of a script or a module."""

    script: str | None = Field(None, min_length=1)
    module: str | None = Field(None, min_length=1)
    args: list[str] | None = None

    @model_validator(mode="after")
    def _one_entry_point(self) -> TorchFramework:
        if (self.script is None) == (self.module is None):
            raise ValueError("set exactly one of script and module")
        return self


class MPIFramework(Wire):
    """``mpirun`` of a binary."""

    binary: str = Field(min_length=1)
    args: list[str] | None = None
    mpi_args: list[str] | None = None
    mpi_implementation: str = "OpenMPI"
    mpirun_path: str = Field(min_length=1)


class ExecFramework(Wire):
    """A command run verbatim."""

    command: list[str] = Field(min_length=1)
    args: list[str] | None = None


class Framework(Wire):
    """Exactly one of torch, mpi and exec."""

    torch: TorchFramework | None = None
    mpi: MPIFramework | None = None
    exec: ExecFramework | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Framework:
        if sum(x is not None for x in (self.torch, self.mpi, self.exec)) != 1:
            raise ValueError("set exactly one of torch, mpi and exec")
        return self

    @property
    def kind(self) -> str:
        """``torch``, ``mpi`` or ``exec``."""
        return "torch" if self.torch else "mpi" if self.mpi else "exec"


class ConfigSource(Wire):
    """Files mounted at /config: inline (a ConfigMap ``<run>-config`` is made) or an existing
    ConfigMap."""

    inline: dict[str, str] | None = None
    config_map_ref: LocalObjectReference | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ConfigSource:
        if (self.inline is None) == (self.config_map_ref is None):
            raise ValueError("set exactly one of inline and configMapRef")
        return self


class CheckpointSpec(Wire):
    """A ReadWriteMany volume for checkpoints and how often a job may restart from one."""

    storage_size: str = Field(pattern=QUANTITY_PATTERN)
    storage_class_name: str | None = None
    max_restarts: Int32 = Field(0, ge=0)


class WorkloadTestScale(StrEnum):
    """How widely the run spreads its jobs."""

    INTRA_NODE = "intra-node"
    INTRA_RACK = "intra-rack"
    FULL_SCALE = "full-scale"


class WorkloadOrchestration(Wire):
    """Scale, repetition, concurrency and the per-job timeout (24h when unset)."""

    test_scale: WorkloadTestScale | None = None
    repeat_count: Int32 | None = Field(None, ge=1)
    max_concurrent: Int32 | None = Field(None, ge=0)
    timeout_per_job: str | None = Field(None, pattern=DURATION_PATTERN)
    placement: str = "Pinned"


class WorkloadRunSpec(Wire):
    """What to run, on how many nodes per job group, with what environment."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": [dict(IMMUTABLE)]})

    target: TargetSpec | None = None
    image: str = Field(min_length=1)
    framework: Framework
    num_nodes: Int32 = Field(ge=1)
    config: ConfigSource | None = None
    gpus_per_node: Int32 | None = Field(None, ge=0)
    mlnx_per_node: Int32 | None = Field(None, ge=0)
    nic_resource_name: NicResourceName | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    env: list[EnvVar] | None = None
    volumes: list[Passthrough] | None = None
    volume_mounts: list[Passthrough] | None = None
    enable_mnnvl: Bool | None = Field(None, alias="enableMNNVL")
    checkpoint: CheckpointSpec | None = None
    resources: ResourceRequirements | None = None
    init_containers: list[Passthrough] | None = None
    orchestration: WorkloadOrchestration | None = None
    thresholds: Thresholds | None = None
    goodput_measurement: LogProfileRef | None = None
    bandwidth_measurement: LogProfileRef | None = None
    overrides: list[OverrideSpec] | None = None
    gang_scheduler: GangSchedulerSpec | None = None
    workload_metadata: WorkloadMetadata | None = None

    @model_validator(mode="after")
    def _thresholds_measured(self) -> WorkloadRunSpec:
        # §7.5: a key no measurement produces fails the run with MeasurementTimeout, a verdict
        # on the nodes for what is a mistake in the file; refuse it as it loads instead.
        set_ = {
            "bandwidthMeasurement": self.bandwidth_measurement,
            "goodputMeasurement": self.goodput_measurement,
        }
        for key in sorted(self.thresholds or {}):
            needs = next(m for m, keys in MEASUREMENT_KEYS.items() if key in keys)
            if set_[needs] is None:
                raise item_error(
                    f".thresholds.{key}",
                    f"{key} is measured only with spec.{needs}, which is not set",
                )
        return self


class WorkloadRunStatus(Wire):
    """Mirrored from the Workflow: conditions, detection and node-result references."""

    conditions: list[Condition] | None = None
    workflow_ref: WorkflowRef | None = None
    detected_platform: str | None = None
    detected_gpu_architecture: str | None = Field(None, alias="detectedGPUArchitecture")
    resolved_gpus_per_node: Int32 | None = None
    succeeded_nodes_ref: TypedLocalObjectReference | None = None
    failed_nodes_ref: TypedLocalObjectReference | None = None


class WorkloadRun(CertifyResource):
    """An ad-hoc distributed workload, run and judged like a certification category."""

    KIND: ClassVar[str] = "WorkloadRun"
    SHORT_NAME: ClassVar[str] = "wlr"
    PLURAL: ClassVar[str] = "workloadruns"

    spec: WorkloadRunSpec
    status: WorkloadRunStatus | None = None
