"""What a certify Job's status becomes (§2.4, §3.3), as pure functions of the Job as read.

The condition trio and its Events come from :mod:`.certification_conditions`; this module adds
the Job's own parts: failed nodes as JSON (keyed by name and reason), the group's nodes from
the ``group-nodes`` annotation, the terminal status in one piece (trio, HardwareFailed,
failureLog, failedNodes and the frozen ``outcome`` together, so a reader never sees a terminal
Job without its outcome), and the spec's durations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from glimmer.api.fleet_sched import parse_duration
from glimmer.backends.kubernetes.certify.ledger import GROUP_NODES_ANNOTATION
from glimmer.certify.jobs import JobLog
from glimmer.certify.outcome import outcome_doc
from glimmer.certify.result import FailedNode
from glimmer.operator.certify.certification_conditions import (
    FAILED,
    SUCCEEDED,
    Transition,
    set_condition,
    set_exclusive,
)

Obj = dict[str, Any]
HARDWARE_FAILED = "HardwareFailed"
VALIDATION_FAILED = "ValidationFailed"


def get(obj: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def group_nodes(job: Mapping[str, Any]) -> list[str]:
    """The group's nodes as the Workflow annotated them, in their order."""
    text = str(get(job, "metadata", "annotations", GROUP_NODES_ANNOTATION) or "")
    return [n for n in (s.strip() for s in text.split(",")) if n]


def failed_nodes(status: Mapping[str, Any]) -> list[FailedNode]:
    return [
        FailedNode(str(f.get("name")), str(f.get("reason")), str(f.get("message") or ""))
        for f in status.get("failedNodes") or ()
        if isinstance(f, Mapping) and f.get("name")
    ]


def failed_nodes_wire(failed: Iterable[FailedNode]) -> list[Obj]:
    ordered = sorted(
        {(f.name, f.reason): f for f in failed}.values(), key=lambda f: (f.name, f.reason)
    )
    return [{"name": f.name, "reason": f.reason, "message": f.message} for f in ordered]


def blame_group(
    job: Mapping[str, Any], existing: Sequence[FailedNode], reason: str, message: str
) -> list[FailedNode]:
    """``existing``, or when it is empty every group node with ``reason`` (§7.2: a failure the
    controller cannot pin on one node is the group's)."""
    if existing:
        return list(existing)
    return [FailedNode(n, reason, message) for n in group_nodes(job)]


def seconds(text: Any, default: float) -> float:
    """A Go duration from the spec in seconds; ``default`` when unset or malformed."""
    if not isinstance(text, str) or not text:
        return default
    try:
        return parse_duration(text)
    except ValueError:
        return default


def duration(text: Any, default: timedelta) -> timedelta:
    return timedelta(seconds=seconds(text, default.total_seconds()))


def parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Ending:
    """How a Job ends: the trio member, its reason and message, and what it leaves."""

    succeeded: bool
    reason: str
    message: str
    log: JobLog
    failure_log: Mapping[str, Any] | None = None
    failed: Sequence[FailedNode] = ()  # the failed-nodes list to write (already merged)
    hardware: bool = False  # HardwareFailed=True with this ending


def hardware_status(status: Mapping[str, Any], ending: Ending, at: datetime) -> Obj:
    """The status of a running Job whose nodes the health check found unhealthy (§3.3, §7.1):
    HardwareFailed=True, the failed nodes, and the outcome frozen with the hardware verdict —
    what the Workflow's replayed core reads — while the trio stays as it was: the Job keeps
    running until the Workflow deletes its workload (:func:`terminal_status` then ends it)."""
    out: Obj = dict(status)
    out["conditions"] = set_condition(
        status.get("conditions"), HARDWARE_FAILED, True, ending.reason, ending.message, at
    )
    out["failedNodes"] = failed_nodes_wire(ending.failed)
    if "outcome" not in out:
        out["outcome"] = outcome_doc(ending.log)
    return out


def terminal_status(
    status: Mapping[str, Any], ending: Ending, at: datetime
) -> tuple[Obj, Transition | None]:
    """The status of a Job that ends as ``ending`` (the outcome is frozen from here on)."""
    out: Obj = dict(status)
    kind = SUCCEEDED if ending.succeeded else FAILED
    conditions, moved = set_exclusive(
        status.get("conditions"), kind, ending.reason, ending.message, at
    )
    if ending.hardware:
        conditions = set_condition(
            conditions, HARDWARE_FAILED, True, "HardwareFailureDetected", ending.message, at
        )
    out["conditions"] = conditions
    if ending.failed:
        out["failedNodes"] = failed_nodes_wire(ending.failed)
    if ending.failure_log is not None:
        out["failureLog"] = dict(ending.failure_log)
    if "outcome" not in out:
        out["outcome"] = outcome_doc(ending.log)
    return out, moved
