"""Job (``cjob``): one workload run of a Workflow on one group of nodes (specs/certify.md §2.4).

The Job controller turns ``spec.workload`` into the workload object (a Kubeflow TrainJob), watches
its nodes' health and its measurements, and records the verdict. What the workload was, how its
nodes are judged and which measurements it gets are fixed at creation (CEL: present or absent as
created, and unchanged). ``status.outcome`` is glimmer's: the finished workload's log as the
certification core reads it, frozen once written, so a finished Job can be replayed from the Job
object alone (a restarted operator asks for it again and gets the same answer).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, model_validator

from glimmer.api.base import Int32, Wire
from glimmer.api.certify.conditions import FAILED_NODES_LIST, FailedNode
from glimmer.api.certify.meta import CertifyResource
from glimmer.api.certify.options import DURATION_PATTERN
from glimmer.api.certify.threshold import Thresholds
from glimmer.api.certify.types import LogProfileRef, WorkloadMetadata
from glimmer.api.k8s import Condition, Passthrough

# Spec fields fixed at creation, each with its own message so a refusal names the field.
IMMUTABLE_FIELDS = (
    "workload",
    "workloadMetadata",
    "nodeHealthMonitor",
    "goodputMeasurement",
    "bandwidthMeasurement",
)
OUTCOME_TEXT_LIMIT = 256 * 1024  # the launcher's log kept on the Job (the object limit is 1 MiB)
FAILURE_TAIL_LIMIT = 32 * 1024


def immutable(field: str) -> dict[str, Any]:
    """The CEL rule that keeps one field as it was created."""
    return {"rule": "self == oldSelf", "message": f"{field} is immutable"}


def _presence_fixed(fields: tuple[str, ...]) -> Any:
    # A field-level rule only runs when both old and new have the field; adding or removing an
    # immutable field is caught one level up.
    return [
        {
            "rule": f"has(self.{field}) == has(oldSelf.{field})",
            "message": f"{field} cannot be added or removed after creation",
        }
        for field in fields
        if field != "workload"  # required: always present
    ]


def _fixed(field: str) -> Any:
    return Field(None, json_schema_extra={"x-kubernetes-validations": [immutable(field)]})


class Workload(Wire):
    """The workload to run: exactly one kind (today only a Kubeflow TrainJob spec)."""

    model_config = ConfigDict(
        json_schema_extra={"x-kubernetes-validations": [immutable("workload")]}
    )

    train_job: Passthrough | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Workload:
        if self.train_job is None:
            raise ValueError("set exactly one workload kind: trainJob")
        return self


class CELHealthCheck(Wire):
    """A CEL expression over ``node``; true means the node is unhealthy (§7.1)."""

    expression: str = Field(min_length=1, max_length=2048)


class NodeHealthMonitor(Wire):
    """How the Job judges the health of the nodes its pods run on."""

    cel: CELHealthCheck


class JobCheckpoint(Wire):
    """Restart from the checkpoints on a shared PVC, at most ``maxRestarts`` times."""

    pvc_name: str = Field(min_length=1)
    max_restarts: Int32 = Field(0, ge=0)


class JobSpec(Wire):
    """The workload, how its nodes are watched, its measurements and thresholds."""

    model_config = ConfigDict(
        json_schema_extra={"x-kubernetes-validations": _presence_fixed(IMMUTABLE_FIELDS)}
    )

    workload: Workload
    workload_metadata: WorkloadMetadata | None = _fixed("workloadMetadata")
    node_health_monitor: NodeHealthMonitor | None = _fixed("nodeHealthMonitor")
    checkpoint: JobCheckpoint | None = None
    stall_multiplier: Int32 | None = Field(None, ge=1)
    startup_stall_timeout_seconds: Int32 | None = Field(None, ge=0)
    goodput_measurement: LogProfileRef | None = _fixed("goodputMeasurement")
    bandwidth_measurement: LogProfileRef | None = _fixed("bandwidthMeasurement")
    thresholds: Thresholds | None = None
    measurement_timeout: str | None = Field(None, pattern=DURATION_PATTERN)


class WorkloadRef(Wire):
    """The workload object the Job created."""

    api_version: str = Field(min_length=1)
    kind: str = Field(min_length=1)
    name: str = Field(min_length=1)
    namespace: str | None = None


class FailureLog(Wire):
    """The tail of the failed container's log (the last 32 KiB), and where it ran."""

    pod_name: str | None = None
    node_name: str | None = None
    exit_code: Int32 | None = None
    reason: str | None = None
    tail: str | None = Field(None, max_length=FAILURE_TAIL_LIMIT)


class JobOutcome(Wire):
    """The finished workload as the certification core reads it (its ``JobLog``): the
    launcher's (rank 0's) log, its exit code, the error line it ended with, the path the
    collective took, the nodes a training failure names and how long a diagnostic ran."""

    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "outcome is frozen once written"}
            ]
        }
    )

    text: str = Field("", max_length=OUTCOME_TEXT_LIMIT)
    exit_code: Int32
    error: str | None = None
    path: str | None = None
    crashed_on: list[str] | None = None
    elapsed_seconds: float | None = Field(None, ge=0)


class JobStatus(Wire):
    """Conditions (the trio, HardwareFailed and ValidationFailed additive), the blamed nodes,
    the workload and its clocks, and the outcome once finished."""

    conditions: list[Condition] | None = None
    failed_nodes: list[FailedNode] | None = Field(None, json_schema_extra=FAILED_NODES_LIST)
    workload_ref: WorkloadRef | None = None
    workload_start_time: datetime | None = None
    restart_count: Int32 | None = Field(None, ge=0)
    failure_log: FailureLog | None = None
    outcome: JobOutcome | None = None


class Job(CertifyResource):
    """One workload run on one group of nodes, judged by its exit, its nodes' health and its
    measurements."""

    KIND: ClassVar[str] = "Job"
    SHORT_NAME: ClassVar[str] = "cjob"
    PLURAL: ClassVar[str] = "jobs"

    spec: JobSpec
    status: JobStatus | None = None
