"""Workflow (``cwf``): one category (or one WorkloadRun) run over groups of nodes, one Job per
group and iteration (specs/certify.md §2.3).

A Certification makes one per category, resolved (catalog entry, options, platform overrides);
the Workflow creates its dependencies, partitions the target's nodes and runs its Jobs. The gang
scheduling it was resolved with is a consistency contract (§4.6): present or absent as created,
and unchanged.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import ConfigDict, Field

from glimmer.api.base import Bool, Int32, Wire
from glimmer.api.certify.job import JobSpec, immutable
from glimmer.api.certify.meta import CertifyResource
from glimmer.api.certify.options import DURATION_PATTERN
from glimmer.api.certify.threshold import Thresholds
from glimmer.api.certify.types import (
    DependencySpec,
    ExecutionSpec,
    GangSchedulerSpec,
    OverrideSpec,
    TargetSpec,
    TopologySpec,
)
from glimmer.api.certify.workflow_status import WorkflowStatus
from glimmer.api.k8s import Passthrough

GANG_PRESENCE_FIXED: dict[str, Any] = {
    "rule": "has(self.gangScheduler) == has(oldSelf.gangScheduler)",
    "message": "gangScheduler cannot be added or removed after creation",
}


class JobTemplateMetadata(Wire):
    """Labels and annotations copied onto every Job."""

    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class JobTemplate(Wire):
    """What each Job of the Workflow is made from."""

    metadata: JobTemplateMetadata | None = None
    spec: JobSpec


class DiagnoseSpec(Wire):
    """Adaptive fault isolation (§7.4): the bisection floor and the domain label (empty: √N
    chunks)."""

    min_group_size: Int32 = Field(2, ge=1)
    topology_key: str | None = None


class OrchestrationSpec(Wire):
    """Which nodes, how they are grouped, how Jobs run, how many times."""

    target: TargetSpec | None = None
    topology: TopologySpec | None = None
    diagnose: DiagnoseSpec | None = None
    execution: ExecutionSpec | None = None
    iterations: Int32 = Field(1, ge=1)


class ThresholdsSpec(Wire):
    """The CEL threshold of each measured key."""

    thresholds: Thresholds | None = None


class TrackingSpec(Wire):
    """Whether results are kept per node and per domain."""

    per_node: Bool | None = None
    per_domain: Bool | None = None


class PerformanceValidation(Wire):
    """Performance validation: thresholds checked on the Jobs' measurements."""

    enabled: Bool | None = None
    plugin: str | None = None
    config: Passthrough | None = None
    tracking: TrackingSpec | None = None
    thresholds: ThresholdsSpec | None = None
    measurement_timeout: str | None = Field(None, pattern=DURATION_PATTERN)


class ValidationSpec(Wire):
    """What the Workflow validates beyond the Jobs' exits."""

    performance: PerformanceValidation | None = None


class WorkflowSpec(Wire):
    """The Job template, the orchestration, dependencies, overrides, validation and the gang
    scheduling contract."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": [GANG_PRESENCE_FIXED]})

    namespace: str | None = None
    job_template: JobTemplate
    orchestration: OrchestrationSpec
    dependencies: list[DependencySpec] | None = None
    overrides: list[OverrideSpec] | None = None
    validation: ValidationSpec | None = None
    gang_scheduler: GangSchedulerSpec | None = Field(
        None, json_schema_extra={"x-kubernetes-validations": [immutable("gangScheduler")]}
    )


class Workflow(CertifyResource):
    """One category over groups of nodes: dependencies, partitioning, one Job per group."""

    KIND: ClassVar[str] = "Workflow"
    SHORT_NAME: ClassVar[str] = "cwf"
    PLURAL: ClassVar[str] = "workflows"

    spec: WorkflowSpec
    status: WorkflowStatus | None = None
