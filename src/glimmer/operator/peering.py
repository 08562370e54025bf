"""Leader election through kopf's peering: only the leader reconciles.

kopf's peering is priority-based: every replica writes itself (identity, priority, lifetime)
into one KopfPeering object (ClusterKopfPeering when the operator serves every namespace);
a replica that sees a live peer of a higher priority pauses — its watches and its runs'
daemons stop — and one that sees a live peer of the *same* priority pauses too. So replicas
must never share a priority, and the one already leading should keep leading when another
starts (no hand-over on every rollout). :func:`own_priority` gives the older replica the higher
priority — the start time in milliseconds, negated — with a random tail against two replicas
started in the same millisecond. A replica killed without saying goodbye is dead to its peers
once its lifetime (:data:`LIFETIME` seconds) passes; then the next-oldest takes over.

The peering CRDs are kopf's own definitions (kopf.dev/v1), here as objects so the manifests
and the tests apply the same ones (:data:`PEERING_CRDS`).
"""

from __future__ import annotations

import secrets
import time
from typing import Any

DEFAULT_PEERING = "glimmer-operator"
LIFETIME = 60  # seconds a replica's record stays live without a keep-alive (kopf's default)
_TAIL = 1000  # random values per millisecond of start time
_EPOCH_MS = 2**42  # past any start time in milliseconds (year 2109)


def own_priority(started: float | None = None) -> int:
    """This replica's peering priority: higher for a replica started earlier."""
    started_ms = int((time.time() if started is None else started) * 1000)
    return (_EPOCH_MS - started_ms) * _TAIL + secrets.randbelow(_TAIL)


def _peering_crd(kind: str, plural: str, scope: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.kopf.dev"},
        "spec": {
            "scope": scope,
            "group": "kopf.dev",
            "names": {"kind": kind, "plural": plural, "singular": plural[:-1]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "status": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


PEERING_CRDS: tuple[dict[str, Any], ...] = (
    _peering_crd("ClusterKopfPeering", "clusterkopfpeerings", "Cluster"),
    _peering_crd("KopfPeering", "kopfpeerings", "Namespaced"),
)


def peering_object(name: str, namespace: str | None) -> dict[str, Any]:
    """The (empty) peering object ``name``: a ClusterKopfPeering without a namespace."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "kopf.dev/v1",
        "kind": "KopfPeering" if namespace is not None else "ClusterKopfPeering",
        "metadata": metadata,
    }
