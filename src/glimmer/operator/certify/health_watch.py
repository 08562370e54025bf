"""Node events mapped to the certify Jobs whose pods run on the node (§3.3 watches, §7.1).

A Node changes all the time (heartbeats move ``lastHeartbeatTime`` every few seconds); only a
change a health expression can see matters: a condition's status, the taints, the labels, the
annotations, the cordon. :func:`health_fingerprint` is that part of a Node; the watch wakes a
Job only when a node's fingerprint differs from the last one seen (a node seen for the first
time counts as changed: a create is health-relevant, a delete is not). The memory of
fingerprints only saves passes: a wake missed on a restart is made up by the Job's safety-net
requeue, whose reconcile runs the health check every time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from glimmer.certify.platform.vocab import JOB_LABEL


def health_fingerprint(node: Mapping[str, Any]) -> str:
    """A digest of what a health expression can read that changes for health reasons."""
    meta = node.get("metadata") or {}
    spec = node.get("spec") or {}
    conditions = sorted(
        (str(c.get("type")), str(c.get("status")))
        for c in (node.get("status") or {}).get("conditions") or ()
        if isinstance(c, Mapping)
    )
    seen = {
        "labels": meta.get("labels") or {},
        "annotations": meta.get("annotations") or {},
        "taints": spec.get("taints") or [],
        "unschedulable": bool(spec.get("unschedulable", False)),
        "conditions": conditions,
    }
    return hashlib.sha256(json.dumps(seen, sort_keys=True).encode()).hexdigest()


class NodeChanges:
    """The last health fingerprint of every node seen; says which events are news."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def changed(self, event_type: str, node: Mapping[str, Any]) -> bool:
        name = str((node.get("metadata") or {}).get("name") or "")
        if event_type == "DELETED":
            self._seen.pop(name, None)
            return False
        digest = health_fingerprint(node)
        if self._seen.get(name) == digest:
            return False
        self._seen[name] = digest
        return True


def jobs_on(node: str, pods: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The (namespace, Job) of every labelled pod bound to ``node``, sorted, once each."""
    found = set()
    for pod in pods:
        meta = pod.get("metadata") or {}
        job = (meta.get("labels") or {}).get(JOB_LABEL)
        if job and (pod.get("spec") or {}).get("nodeName") == node:
            found.add((str(meta.get("namespace") or "default"), str(job)))
    return sorted(found)
