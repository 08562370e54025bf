"""The run conditions the planner decides (§1.4): their types and reasons as data, and one
constructor that clamps every message to the contract's 1024 bytes without splitting a
character."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from glimmer.api.k8s import Condition
from glimmer.verdict.text import clamp_bytes

MAX_CONDITION_MESSAGE_BYTES = 1024

ADMITTED = "Admitted"
THRESHOLDS_SOUND = "ThresholdsSound"
PLAN_EXPANDED = "PlanExpanded"

Status = Literal["True", "False", "Unknown"]


@dataclass(frozen=True)
class ConditionKind:
    """One (type, status, reason) the planner writes."""

    type: str
    status: Status
    reason: str


TARGETS_AVAILABLE = ConditionKind(ADMITTED, "True", "TargetsAvailable")
ADMITTED_BY_FORCE = ConditionKind(ADMITTED, "True", "AdmittedByForce")
TARGETS_BUSY = ConditionKind(ADMITTED, "False", "TargetsBusy")
REVIEWED = ConditionKind(THRESHOLDS_SOUND, "True", "Reviewed")
UNSOUND_THRESHOLDS = ConditionKind(THRESHOLDS_SOUND, "False", "UnsoundThresholds")
VARIANTS_EXPANDED = ConditionKind(PLAN_EXPANDED, "True", "VariantsExpanded")


def condition(
    which: ConditionKind, message: str, now: datetime, generation: int | None
) -> Condition:
    """A condition of kind ``which`` saying ``message`` (clamped to 1024 bytes)."""
    return Condition(
        type=which.type,
        status=which.status,
        reason=which.reason,
        message=clamp_bytes(message, MAX_CONDITION_MESSAGE_BYTES),
        last_transition_time=now,
        observed_generation=generation,
    )
