"""The snapshot of a ReportExport: the exact bytes every attempt sends, persisted in a
ConfigMap the export owns before the first attempt.

The payload is built once, from the Certification's ``<cert>-report`` ConfigMap, as compact
JSON with sorted keys::

    {"apiVersion": "certify.glimmer.ai/v1alpha1", "kind": "CertificationReport",
     "reportID": ..., "clusterID": ..., "result": "Succeeded" | "Failed",
     "certification": {"namespace", "name", "uid"}, "report": <result.json>}

and never again: a snapshot ConfigMap that already exists (a restart between creating it and
recording it in the status) is adopted when the export owns it, its bytes unchanged, so no
kill at any point sends a different payload. Its SHA-256 is recorded in the status and in an
annotation, and checked against the bytes before every attempt.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from glimmer.api.certify.report_export import ReportExportSpec
from glimmer.backends.kubernetes.certify.resources import CERTIFICATIONS, CERTIFY_API_VERSION
from glimmer.backends.kubernetes.errors import AlreadyExists
from glimmer.certify.platform.vocab import MANAGED_BY, MANAGED_BY_KEY
from glimmer.operator.certify.certification_build import controlled_by, controller_ref
from glimmer.operator.certify.certification_conditions import true_member
from glimmer.operator.certify.report_export_names import (
    CERTIFICATION_LABEL,
    SHA256_ANNOTATION,
    SNAPSHOT_KEY,
    snapshot_name,
)
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, meta, resource_for
from glimmer.operator.certify.workflow_discovery import Refused
from glimmer.operator.certify.workflow_result import REPORT_KEY, configmap, report_name

CONFIGMAPS = resource_for("v1", "ConfigMap")
RESULT_ANNOTATION = "certify.glimmer.ai/result"
# No snapshot can be taken (or trusted): :class:`Refused` (reason, message) fails the export.


@dataclass(frozen=True)
class Snapshot:
    name: str
    key: str
    sha256: str
    size: int
    result: str


def digest(payload: bytes) -> str:
    return hashlib.sha256(payload).hexdigest()


def payload(spec: ReportExportSpec, result: str, report: Any) -> bytes:
    """The bytes delivered for ``report`` (the Certification's parsed result document)."""
    src = spec.source_ref
    doc = {
        "apiVersion": CERTIFY_API_VERSION,
        "kind": "CertificationReport",
        "reportID": spec.report_id,
        "clusterID": spec.cluster_id,
        "result": result,
        "certification": {"namespace": src.namespace, "name": src.name, "uid": src.uid},
        "report": report,
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def take(cluster: Cluster, export: Obj, spec: ReportExportSpec) -> Snapshot:
    """The export's snapshot: the one persisted already, else a new one from the report."""
    namespace = str(meta(export).get("namespace") or "default")
    name = snapshot_name(str(meta(export).get("name")))
    found = cluster.get(CONFIGMAPS, name, namespace)
    if found is not None:
        return _adopted(found, export)
    result, report = _report(cluster, spec)
    body = payload(spec, result, report)
    sha = digest(body)
    record = configmap(
        name,
        namespace,
        {SNAPSHOT_KEY: body.decode()},
        controller_ref(export),
        {MANAGED_BY_KEY: MANAGED_BY, CERTIFICATION_LABEL: spec.source_ref.name},
    )
    record["metadata"]["annotations"] = {SHA256_ANNOTATION: sha, RESULT_ANNOTATION: result}
    try:
        cluster.create(CONFIGMAPS, record, namespace)
    except AlreadyExists:
        again = cluster.get(CONFIGMAPS, name, namespace)
        if again is None:
            raise Refused("SnapshotLost", f"ConfigMap {name} vanished") from None
        return _adopted(again, export)
    return Snapshot(name, SNAPSHOT_KEY, sha, len(body), result)


def _adopted(found: Obj, export: Obj) -> Snapshot:
    name = str(meta(found).get("name"))
    if not controlled_by(found, str(meta(export).get("uid") or "")):
        raise Refused(
            "SnapshotNameTaken",
            f"ConfigMap {name} exists and is not owned by this ReportExport; it is left alone",
        )
    text = (found.get("data") or {}).get(SNAPSHOT_KEY)
    if not isinstance(text, str):
        raise Refused("SnapshotLost", f"ConfigMap {name} has no {SNAPSHOT_KEY}")
    body = text.encode()
    result = str((meta(found).get("annotations") or {}).get(RESULT_ANNOTATION) or "")
    return Snapshot(name, SNAPSHOT_KEY, digest(body), len(body), result)


def _report(cluster: Cluster, spec: ReportExportSpec) -> tuple[str, Any]:
    src = spec.source_ref
    cert = cluster.get(CERTIFICATIONS, src.name, src.namespace)
    if cert is None or str(meta(cert).get("uid")) != src.uid:
        raise Refused(
            "SourceGone", f"Certification {src.namespace}/{src.name} (uid {src.uid}) is gone"
        )
    result = true_member((cert.get("status") or {}).get("conditions"))
    name = report_name(src.name)
    found = cluster.get(CONFIGMAPS, name, src.namespace)
    text = ((found or {}).get("data") or {}).get(REPORT_KEY)
    if not isinstance(text, str):
        raise Refused("ReportMissing", f"ConfigMap {src.namespace}/{name} holds no {REPORT_KEY}")
    try:
        return result, json.loads(text)
    except json.JSONDecodeError as e:
        raise Refused(
            "ReportUnreadable", f"ConfigMap {src.namespace}/{name} {REPORT_KEY}: {e}"
        ) from None


def read(cluster: Cluster, namespace: str, name: str, key: str, sha256: str) -> bytes:
    """The snapshot's bytes, checked against the digest recorded when it was taken."""
    found = cluster.get(CONFIGMAPS, name, namespace)
    text = ((found or {}).get("data") or {}).get(key)
    if not isinstance(text, str):
        raise Refused("SnapshotLost", f"snapshot ConfigMap {name} or its {key} is gone")
    body = text.encode()
    if digest(body) != sha256:
        raise Refused(
            "SnapshotCorrupt", f"snapshot ConfigMap {name} no longer matches sha256 {sha256}"
        )
    return body
