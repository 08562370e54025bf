"""Failure attribution and the node-result documents (specs/certify.md §7.2), as pure functions.

Which nodes a failed group blames: the node-health check names its nodes itself
(HardwareFailureDetected, :mod:`health`); a threshold violation or a failed workload blames the
whole group, but only when nothing more specific was found — a named bad node explains the
failure better than "everyone in the group".

A Workflow keeps its results outside its status, because thousands of names would overflow the
~1 MiB object limit: ConfigMap ``failed-nodes-<uid8>`` key ``failed-nodes.json.gz`` (a gzip JSON
array of ``{name, reason, message}``) and ``succeeded-nodes-<uid8>`` key
``succeeded-nodes.csv.gz`` (gzip, comma-separated). Both are written byte-stable (sorted, no
gzip timestamp) so re-writing an unchanged result changes nothing.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Sequence

from glimmer.certify.result import THRESHOLD, WORKLOAD, FailedNode

FAILED_KEY = "failed-nodes.json.gz"
SUCCEEDED_KEY = "succeeded-nodes.csv.gz"


def group_failures(
    failed: Sequence[FailedNode],
    group_nodes: Iterable[str],
    *,
    threshold_violation: bool = False,
    workload_failed: bool = False,
    message: str = "",
) -> list[FailedNode]:
    """A terminal group's failedNodes: ``failed`` (what the Job found itself) when it names
    anyone; else every group node with ThresholdViolation (ValidationFailed=True) or
    WorkloadFailed (the Job Failed), ThresholdViolation first when both hold."""
    if failed:
        return union_failed_nodes(failed)
    reasons = [r for r, on in ((THRESHOLD, threshold_violation), (WORKLOAD, workload_failed)) if on]
    if not reasons:
        return []
    return union_failed_nodes([FailedNode(n, reasons[0], message) for n in group_nodes])


def union_failed_nodes(*lists: Iterable[FailedNode]) -> list[FailedNode]:
    """Every entry once per (name, reason) — the first one seen keeps its message — sorted by
    name then reason."""
    seen: dict[tuple[str, str], FailedNode] = {}
    for entries in lists:
        for f in entries:
            seen.setdefault((f.name, f.reason), f)
    return [seen[k] for k in sorted(seen)]


def result_configmap_names(workflow_uid: str) -> tuple[str, str]:
    """``failed-nodes-<uid8>`` and ``succeeded-nodes-<uid8>`` for a Workflow."""
    uid8 = workflow_uid[:8]
    return f"failed-nodes-{uid8}", f"succeeded-nodes-{uid8}"


def failed_nodes_payload(failed: Iterable[FailedNode]) -> bytes:
    """The gzip JSON array of the failed-nodes ConfigMap (deduplicated, sorted)."""
    doc = [
        {"name": f.name, "reason": f.reason, "message": f.message}
        for f in union_failed_nodes(failed)
    ]
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode(), mtime=0)


def succeeded_nodes_payload(names: Iterable[str]) -> bytes:
    """The gzip comma-separated list of the succeeded-nodes ConfigMap (sorted, unique)."""
    return gzip.compress(",".join(sorted(set(names))).encode(), mtime=0)


def read_failed_nodes(payload: bytes) -> list[FailedNode]:
    """The entries of a failed-nodes payload."""
    doc = json.loads(gzip.decompress(payload))
    return [FailedNode(str(d["name"]), str(d["reason"]), str(d.get("message", ""))) for d in doc]


def read_succeeded_nodes(payload: bytes) -> list[str]:
    """The names of a succeeded-nodes payload."""
    text = gzip.decompress(payload).decode()
    return text.split(",") if text else []
