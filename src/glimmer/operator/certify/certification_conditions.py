"""The condition model of every certification kind (specs/certify.md §1.1), as pure functions.

``InProgress``, ``Succeeded`` and ``Failed`` are an exclusive trio: setting one True sets the
other two False (with the reason the kind uses for them: ``Superseded`` on a WorkloadRun, the
new reason elsewhere). ``ValidationFailed`` and ``HardwareFailed`` are additive. A condition
keeps its ``lastTransitionTime`` while its status stays; an Event is due when the True member
of the trio changes (Warning when it becomes ``Failed``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

IN_PROGRESS, SUCCEEDED, FAILED = "InProgress", "Succeeded", "Failed"
VALIDATION_FAILED = "ValidationFailed"
TRIO = (IN_PROGRESS, SUCCEEDED, FAILED)

Condition = dict[str, Any]


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def find(conditions: Sequence[Mapping[str, Any]] | None, kind: str) -> Mapping[str, Any] | None:
    for c in conditions or ():
        if c.get("type") == kind:
            return c
    return None


def is_true(conditions: Sequence[Mapping[str, Any]] | None, kind: str) -> bool:
    c = find(conditions, kind)
    return bool(c and c.get("status") == "True")


def true_member(conditions: Sequence[Mapping[str, Any]] | None) -> str:
    """Which of the trio is True ("" when none is yet)."""
    return next((k for k in TRIO if is_true(conditions, k)), "")


def terminal(conditions: Sequence[Mapping[str, Any]] | None) -> bool:
    return is_true(conditions, SUCCEEDED) or is_true(conditions, FAILED)


def set_condition(
    conditions: Sequence[Mapping[str, Any]] | None,
    kind: str,
    status: bool,
    reason: str,
    message: str,
    at: datetime,
) -> list[Condition]:
    """``conditions`` with ``kind`` set; its transition time moves only with its status."""
    out: list[Condition] = []
    value = "True" if status else "False"
    placed = False
    for c in conditions or ():
        if c.get("type") != kind:
            out.append(dict(c))
            continue
        moved = c.get("status") != value
        out.append(
            {
                "type": kind,
                "status": value,
                "reason": reason,
                "message": message,
                "lastTransitionTime": stamp(at) if moved else c.get("lastTransitionTime"),
            }
        )
        placed = True
    if not placed:
        out.append(
            {
                "type": kind,
                "status": value,
                "reason": reason,
                "message": message,
                "lastTransitionTime": stamp(at),
            }
        )
    return out


@dataclass(frozen=True)
class Transition:
    """A change of the trio's True member, for the Event it is due."""

    old: str
    new: str
    reason: str
    message: str

    @property
    def warning(self) -> bool:
        return self.new == FAILED


def set_exclusive(
    conditions: Sequence[Mapping[str, Any]] | None,
    kind: str,
    reason: str,
    message: str,
    at: datetime,
    superseded: str = "",
) -> tuple[list[Condition], Transition | None]:
    """The trio with ``kind`` True and the other two False (reason ``superseded``, else the
    new reason), and the transition when the True member changed."""
    old = true_member(conditions)
    out: list[Condition] = [dict(c) for c in conditions or ()]
    for member in TRIO:
        if member == kind:
            out = set_condition(out, member, True, reason, message, at)
        else:
            out = set_condition(out, member, False, superseded or reason, message, at)
    changed = old != kind
    same = find(conditions, kind)
    if not changed and same is not None and same.get("message") != message:
        # Progress within InProgress (category 2 of 3): an Event for a human following along.
        changed = True
    return out, Transition(old, kind, reason, message) if changed else None
