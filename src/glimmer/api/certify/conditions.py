"""The condition types of the certification kinds (specs/certify.md §1.1) and the reasons a
node is blamed for (§2.1 FailedNode), so every writer and reader spells them the same.

The trio InProgress, Succeeded, Failed is exclusive (exactly one is True); HardwareFailed (Jobs
only) and ValidationFailed are additive; measurements use Measuring and Complete.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from glimmer.api.base import Wire


class ConditionType(StrEnum):
    """Every ``status.conditions[].type`` a certification object carries."""

    IN_PROGRESS = "InProgress"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    HARDWARE_FAILED = "HardwareFailed"
    VALIDATION_FAILED = "ValidationFailed"
    MEASURING = "Measuring"
    COMPLETE = "Complete"


# The exclusive trio: setting one True sets the other two False.
EXCLUSIVE = (ConditionType.IN_PROGRESS, ConditionType.SUCCEEDED, ConditionType.FAILED)
# A Job (or Workflow, Certification) is terminal once one of these is True.
TERMINAL = (ConditionType.SUCCEEDED, ConditionType.FAILED)


class FailureReason(StrEnum):
    """Why a node is on a failed-nodes list."""

    HARDWARE_FAILURE_DETECTED = "HardwareFailureDetected"
    THRESHOLD_VIOLATION = "ThresholdViolation"
    WORKLOAD_FAILED = "WorkloadFailed"


class FailedNode(Wire):
    """A node blamed for a failure, once per reason (lists of them are keyed by name+reason)."""

    name: str = Field(min_length=1)
    reason: FailureReason
    message: str = ""


# A list of FailedNode as the API server merges it: one entry per (name, reason).
FAILED_NODES_LIST: dict[str, Any] = {
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name", "reason"],
}
