"""core/v1 Events about an object: what ``kubectl describe`` shows under it.

§2 keeps every decision in the run's status and conditions ("a condition, not an Event,
because verdicts outlive events"); an Event is the notice beside it — the fingerprint
reconciler's ``HardwareDrift`` Warning (§7.2), a run's phase changes for a human watching
``kubectl describe bir``. Posting one never decides anything, so a failure to post is the
caller's to ignore: :func:`post_event` raises the engine's
:class:`~glimmer.engine.backend.BackendError` and the caller logs it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lightkube import Client

from glimmer.backends.kubernetes.errors import AlreadyExists, api_call
from glimmer.backends.kubernetes.resources import EVENTS

COMPONENT = "glimmer-operator"
NORMAL = "Normal"
WARNING = "Warning"


@dataclass(frozen=True)
class Involved:
    """The object an Event is about."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str


def event_name(involved: Involved, reason: str, message: str) -> str:
    """``<object>.<16 hex>``: one Event per object, reason and message, as kubectl's
    ``<name>.<hash>`` names them (the same notice posted twice is named the same)."""
    digest = hashlib.sha256(f"{involved.uid}\0{reason}\0{message}".encode()).hexdigest()
    return f"{involved.name[:200]}.{digest[:16]}"


def event_manifest(
    involved: Involved, reason: str, message: str, kind: str, at: datetime
) -> dict[str, Any]:
    """The Event object (``kind``: Normal or Warning; ``at`` its time, UTC)."""
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": event_name(involved, reason, message),
            "namespace": involved.namespace,
        },
        "involvedObject": {
            "apiVersion": involved.api_version,
            "kind": involved.kind,
            "namespace": involved.namespace,
            "name": involved.name,
            "uid": involved.uid,
        },
        "reason": reason,
        "message": message,
        "type": kind,
        "source": {"component": COMPONENT},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


def post_event(
    client: Client,
    involved: Involved,
    reason: str,
    message: str,
    *,
    kind: str = NORMAL,
    at: datetime,
) -> None:
    """Create the Event; the same notice already posted (409) is left as it is."""
    manifest = event_manifest(involved, reason, message, kind, at)
    try:
        with api_call(f"post event {reason} on {involved.kind} {involved.name}"):
            client.create(EVENTS.from_dict(manifest), namespace=involved.namespace)
    except AlreadyExists:
        pass
