"""API errors as the ``Status`` objects a real API server answers with.

The ``reason`` is the machine word clients branch on (kubectl's apply needs ``NotFound``;
lightkube and kopf read ``Conflict`` and ``AlreadyExists``), and the message follows the API
server's wording so a log line reads the same against the stand-in as against a cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tools.k8s_standin.resources import ResourceType


@dataclass
class APIError(Exception):
    code: int
    reason: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def _details(rtype: ResourceType | None, name: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if rtype is not None:
        if rtype.group:
            out["group"] = rtype.group
        out["kind"] = rtype.plural
    return out


def not_found(rtype: ResourceType, name: str) -> APIError:
    return APIError(404, "NotFound", f'{rtype.qualified} "{name}" not found', _details(rtype, name))


def no_such_path(path: str) -> APIError:
    return APIError(404, "NotFound", "the server could not find the requested resource", {})


def already_exists(rtype: ResourceType, name: str) -> APIError:
    return APIError(
        409, "AlreadyExists", f'{rtype.qualified} "{name}" already exists', _details(rtype, name)
    )


def conflict(rtype: ResourceType, name: str, why: str | None = None) -> APIError:
    why = (
        why
        or "the object has been modified; please apply your changes to the latest version and "
        "try again"
    )
    return APIError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {rtype.qualified} "{name}": {why}',
        _details(rtype, name),
    )


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
) -> APIError:
    return APIError(405, "MethodNotAllowed", message)


def gone(message: str) -> APIError:
    return APIError(410, "Expired", message)


@dataclass(frozen=True)
class Cause:
    field: str
    message: str
    reason: str = "FieldValueInvalid"


def invalid(rtype: ResourceType, name: str, causes: Sequence[Cause]) -> APIError:
    summary = ", ".join(f"{c.field}: {c.message}" if c.field else c.message for c in causes)
    details = _details(rtype, name)
    details["kind"] = rtype.kind
    details["causes"] = [
        {"reason": c.reason, "message": c.message, "field": c.field} for c in causes
    ]
    label = f"{rtype.kind}.{rtype.group}" if rtype.group else rtype.kind
    return APIError(422, "Invalid", f'{label} "{name}" is invalid: {summary}', details)
