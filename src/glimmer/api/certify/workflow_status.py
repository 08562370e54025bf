"""What a Workflow reports (specs/certify.md §2.3 status): its groups and their phases, the
iterations done, the detection, the overrides applied, fault isolation's progress and the
dependencies it created. Node lists of any size live in ConfigMaps (the refs), not here.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import Field

from glimmer.api.base import Bool, Int32, Wire
from glimmer.api.certify.types import TypedLocalObjectReference
from glimmer.api.k8s import Condition, Passthrough


class GroupPhase(StrEnum):
    """Where one group stands."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


class GroupStatus(Wire):
    """One group of nodes and its Job."""

    name: str = Field(min_length=1)
    nodes: list[str] | None = None
    domains: list[str] | None = None
    domain_node_counts: dict[str, Int32] | None = None
    overflow: Bool | None = None
    phase: GroupPhase = GroupPhase.PENDING
    retries: Int32 | None = Field(None, ge=0)
    job_ref: str | None = None
    start_time: datetime | None = None
    completion_time: datetime | None = None


class GroupRecord(Wire):
    """A group of a finished iteration, as history keeps it."""

    name: str = Field(min_length=1)
    phase: GroupPhase
    job_name: str | None = None
    start_time: datetime | None = None
    completion_time: datetime | None = None


class IterationRecord(Wire):
    """The groups of one finished iteration."""

    iteration: Int32 = Field(ge=1)
    groups: list[GroupRecord] | None = None


class AppliedOverride(Wire):
    """An override that matched: its index, its guard and what it patched."""

    index: Int32 = Field(ge=0)
    when: str | None = None
    patches: str | None = None
    no_op: Bool | None = None


class InfrastructureFault(Wire):
    """A fault between two groups that each pass alone (§7.4 cross-boundary)."""

    domain: str | None = None
    group_a: str | None = None
    group_b: str | None = None
    stage: str | None = None


class DiagnoseStage(StrEnum):
    """The stages of adaptive fault isolation, in order."""

    INTRA_SCREENING = "intra-screening"
    INTRA_SCREENING_NO_NVL = "intra-screening-no-nvl"
    INTER_SCREENING = "inter-screening"
    BISECTION = "bisection"
    CROSS_BOUNDARY = "cross-boundary"
    CONFIRMATION = "confirmation"
    COMPLETE = "complete"


class DiagnoseStatus(Wire):
    """Fault isolation's progress: the stage, completed rounds, and which nodes are healthy,
    suspect or confirmed faulty."""

    stage: DiagnoseStage | None = None
    round: Int32 | None = Field(None, ge=0)
    probe_round: Int32 | None = Field(None, ge=0)
    healthy_nodes: list[str] | None = None
    suspect_nodes: list[str] | None = None
    no_nvl_suspect_nodes: list[str] | None = Field(None, alias="noNVLSuspectNodes")
    confirmed_faulty_nodes: list[str] | None = None
    screening_results: Passthrough | None = None  # per domain, as the isolation writes it
    infrastructure_faults: list[InfrastructureFault] | None = None


class OrchestrationStatus(Wire):
    """Totals, iterations, detection, exclusions, overrides, diagnose and the current groups."""

    total_nodes: Int32 | None = Field(None, ge=0)
    nodes_per_job: Int32 | None = Field(None, ge=0)
    total_groups: Int32 | None = Field(None, ge=0)
    current_iteration: Int32 | None = Field(None, ge=0)
    completed_iterations: Int32 | None = Field(None, ge=0)
    iteration_history: list[IterationRecord] | None = None
    detected_platform: str | None = None
    detected_gpu_architecture: str | None = Field(None, alias="detectedGPUArchitecture")
    excluded_nodes: list[str] | None = None
    exclusion_reason: str | None = None
    applied_overrides: list[AppliedOverride] | None = None
    diagnose: DiagnoseStatus | None = None
    groups: list[GroupStatus] | None = None


class DependencyRef(Wire):
    """A dependency the Workflow created, and for which scope (once, per Job, per iteration)."""

    api_version: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)
    namespace: str | None = None
    scope: Literal["workflow", "job", "iteration"] = "workflow"
    group_name: str | None = None
    iteration: Int32 | None = Field(None, ge=0)
    # A PersistentVolumeClaim's: the PersistentVolume bound behind it, once stamped with the
    # Workflow's UID (kept here because the claim is gone by the time the volume is released).
    volume_name: str | None = None


class WorkflowStatus(Wire):
    """Conditions (the trio; ValidationFailed additive), orchestration, what was created and
    where the node results are."""

    conditions: list[Condition] | None = None
    namespace: str | None = None
    orchestration: OrchestrationStatus | None = None
    dependency_refs: list[DependencyRef] | None = None
    succeeded_nodes_ref: TypedLocalObjectReference | None = None
    failed_nodes_ref: TypedLocalObjectReference | None = None
    group_nodes_ref: TypedLocalObjectReference | None = None
    node_results: dict[str, Passthrough] | None = None
    domain_results: dict[str, Passthrough] | None = None
