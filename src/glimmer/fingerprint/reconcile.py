"""One observation of a node folded into its NodeFingerprint (specs/burnin.md §7.2 steps 2-7).

Drift is classified against the stored digest: none stored -> ``Drifted=False/BaselineCaptured``;
equal -> ``False/DigestStable``; a different digest scheme -> ``False/DigestSchemeChanged`` (the
hash changed form, not the hardware: no claim); otherwise ``Drifted=True/DigestChanged`` with a
message naming the changes and a Warning event ``HardwareDrift`` for each change seen.

``Drifted=True`` is sticky: later stable observations do not clear it. It ends when a human
acknowledges it, in one of two ways: deleting the NodeFingerprint (the next observation is a new
baseline, as in the original operator), or setting the annotation
``burnin.glimmer.ai/acknowledged-digest`` to the digest they accept. An acknowledgement names a
digest rather than saying "yes", so it covers exactly the change that was looked at: any later
change raises drift again, and a digest acknowledged before a planned upgrade lands is not
reported as drift at all.

The result is the fingerprint to store and the events to emit. It has no way to start a run:
drift is reported, never acted on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from glimmer.api.fingerprint import NodeFingerprint, NodeFingerprintStatus
from glimmer.api.k8s import Condition
from glimmer.api.meta import API_VERSION
from glimmer.fingerprint.changes import describe
from glimmer.fingerprint.digest import digest, scheme_of
from glimmer.fingerprint.identity import Identity
from glimmer.fingerprint.keys import (
    ACKNOWLEDGED_DIGEST,
    BASELINE_CAPTURED,
    CONDITION_MESSAGE_MAX,
    DIGEST_CHANGED,
    DIGEST_SCHEME_CHANGED,
    DIGEST_STABLE,
    DRIFT_ACKNOWLEDGED,
    DRIFTED,
    HARDWARE_DRIFT,
    NODE_LABEL,
    SCHEME,
)
from glimmer.fingerprint.naming import fingerprint_name

_LABEL_VALUE_MAX = 63


@dataclass(frozen=True)
class Event:
    """A Kubernetes Event about a NodeFingerprint."""

    type: str
    reason: str
    message: str
    node: str
    fingerprint: str


@dataclass(frozen=True)
class Observation:
    """The fingerprint to store, whether it differs from the stored one, and the events.
    ``conflict`` is set (and nothing else changes) when the object of that name belongs to a
    different node."""

    fingerprint: NodeFingerprint
    changed: bool
    events: tuple[Event, ...] = ()
    conflict: str | None = None

    @property
    def drifted(self) -> bool:
        status = self.fingerprint.status
        return any(
            c.type == DRIFTED and c.status == "True"
            for c in (status.conditions if status else None) or ()
        )


def new_fingerprint(node: str, namespace: str | None = None) -> NodeFingerprint:
    """An empty NodeFingerprint for ``node`` (name rule of §1.6, node label)."""
    metadata: dict[str, Any] = {"name": fingerprint_name(node)}
    if namespace:
        metadata["namespace"] = namespace
    if len(node) <= _LABEL_VALUE_MAX and fingerprint_name(node) == node:
        # A label value is at most 63 characters; a longer name lives in spec.nodeName only.
        metadata["labels"] = {NODE_LABEL: node}
    return NodeFingerprint.model_validate(
        {
            "apiVersion": API_VERSION,
            "kind": NodeFingerprint.KIND,
            "metadata": metadata,
            "spec": {"nodeName": node},
        }
    )


def _condition(
    old: Condition | None,
    true: bool,
    reason: str,
    message: str,
    now: datetime,
    generation: int | None,
) -> Condition:
    text = "True" if true else "False"
    data: dict[str, Any] = {
        "type": DRIFTED,
        "status": text,
        "lastTransitionTime": old.last_transition_time
        if old is not None and old.status == text
        else now,
        "reason": reason,
        "message": message[:CONDITION_MESSAGE_MAX],
    }
    if generation is not None:
        data["observedGeneration"] = generation
    return Condition.model_validate(data)


def observe(
    existing: NodeFingerprint | None,
    node: str,
    identity: Identity,
    now: datetime,
    *,
    namespace: str | None = None,
) -> Observation:
    """Fold ``identity``, observed on ``node`` at ``now`` (aware), into ``existing``."""
    if now.tzinfo is None:
        raise ValueError("observe needs a timezone-aware now")
    fingerprint = existing or new_fingerprint(node, namespace)
    if fingerprint.spec.node_name != node:
        why = f"NodeFingerprint {fingerprint.name} belongs to node {fingerprint.spec.node_name}"
        return Observation(fingerprint, False, conflict=why)
    name = fingerprint.name
    before = fingerprint.status or NodeFingerprintStatus()
    current = digest(identity)
    stored = before.digest
    seen = Identity.from_status(before)
    acknowledged = (fingerprint.metadata.annotations or {}).get(ACKNOWLEDGED_DIGEST) == current
    old = next((c for c in before.conditions or () if c.type == DRIFTED), None)
    generation = fingerprint.metadata.generation
    events: list[Event] = []

    if stored is None:
        true, reason, message = False, BASELINE_CAPTURED, f"baseline captured: {current}"
    elif stored == current:
        true, reason, message = False, DIGEST_STABLE, f"digest unchanged: {current}"
    elif scheme_of(stored) != SCHEME:
        true, reason = False, DIGEST_SCHEME_CHANGED
        was = scheme_of(stored) or "none"
        message = f"digest scheme {was} → {SCHEME}: re-baselined, no drift claimed"
    elif acknowledged:
        true, reason, message = False, DRIFT_ACKNOWLEDGED, f"change to {current} acknowledged"
    else:
        true, reason = True, DIGEST_CHANGED
        message = describe(seen, identity) or f"digest {stored} → {current}"
        events.append(Event("Warning", HARDWARE_DRIFT, message, node, name))

    if old is not None and old.status == "True" and not true:
        # Sticky: only an acknowledgement (or deleting this object) ends a drift.
        if acknowledged:
            true, reason, message = False, DRIFT_ACKNOWLEDGED, f"drift acknowledged at {current}"
        else:
            true, reason, message = True, old.reason, old.message
    condition = _condition(old, true, reason, message, now, generation)

    captured = before.captured_at if seen == identity and before.captured_at else now
    data: dict[str, Any] = {
        **identity.status_fields(),
        "captured_at": captured,
        "digest": current,
        "observed_generation": generation if generation is not None else before.observed_generation,
        "conditions": [*(c for c in before.conditions or () if c.type != DRIFTED), condition],
    }
    # Built afresh (not copied) so an unknown field is absent on output rather than null.
    after = NodeFingerprintStatus.model_validate({k: v for k, v in data.items() if v is not None})
    changed = existing is None or before.model_dump() != after.model_dump()
    return Observation(fingerprint.model_copy(update={"status": after}), changed, tuple(events))
