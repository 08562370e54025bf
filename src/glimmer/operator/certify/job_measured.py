"""The measurements a certify Job asks for, as its controller sees them (§2.4, §2.6–2.7, §7.5,
§7.6): their names and manifests, whether one is Complete, the values a threshold may read
from them, and a GoodputMeasurement's progress as the stall rule reads it. Pure functions over
the objects as read.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from glimmer.backends.kubernetes.certify.ledger import owner_reference
from glimmer.backends.kubernetes.certify.resources import CERTIFY_API_VERSION
from glimmer.certify import job_rules
from glimmer.certify.catalog.naming import truncate
from glimmer.certify.platform.vocab import (
    GROUP,
    JOB_LABEL,
    MANAGED_BY,
    MANAGED_BY_KEY,
    WORKFLOW_LABEL,
)
from glimmer.certify.threshold_verdict import available
from glimmer.operator.certify.certification_conditions import find
from glimmer.operator.certify.job_status import get, parse_time

Obj = dict[str, Any]
MEASUREMENT_REF_GROUP = GROUP
GOODPUT_FIELDS = (  # threshold key -> GoodputMeasurement status field
    ("goodputRatio", "result"),
    ("avgTFLOPsPerGPU", "avgTFLOPSPerGPU"),
    ("avgStepTimeSec", "avgStepTimeSec"),
)


def measured_values(
    bandwidth: Mapping[str, Any] | None, goodput: Mapping[str, Any] | None
) -> dict[str, float]:
    """What a threshold may read from the Job's BandwidthMeasurement and GoodputMeasurement:
    peak busBW/algBW over sizes, the goodput figures, each only once its measurement is
    Complete (:func:`glimmer.certify.threshold_verdict.available`)."""
    results = get(bandwidth, "status", "results") or []
    peaks: dict[str, float] = {}
    if results:
        peaks["busBandwidthGBps"] = max(float(r.get("busBW") or 0) for r in results)
        peaks["algBandwidthGBps"] = max(float(r.get("algBW") or 0) for r in results)
    gs = get(goodput, "status") or {}
    figures = {
        key: float(gs[field]) for key, field in GOODPUT_FIELDS if gs.get(field) not in (None, "")
    }
    return available(
        bandwidth_complete=complete(bandwidth),
        bandwidth=peaks,
        goodput_complete=complete(goodput),
        goodput=figures,
    )


def complete(measurement: Mapping[str, Any] | None) -> bool:
    c = find(get(measurement, "status", "conditions"), "Complete")
    return bool(c and c.get("status") == "True")


def progress_of(gm: Mapping[str, Any], workload_start: datetime | None) -> job_rules.Progress:
    """The GoodputMeasurement's progress as the stall rule reads it. Steps older than this
    workload's start belong to an attempt before a checkpoint restart: they count as none, so
    the new attempt gets its startup budget instead of being stalled at once."""
    s = get(gm, "status") or {}
    last = parse_time(s.get("lastStepTimestamp"))
    avg = float(s["avgStepTimeSec"]) if s.get("avgStepTimeSec") else None
    app = parse_time(s.get("applicationStartTime"))
    if workload_start is not None and last is not None and last < workload_start:
        last, avg = None, None
    if workload_start is not None and app is not None and app < workload_start:
        app = None
    return job_rules.Progress(
        start_time=parse_time(s.get("startTime")),
        application_start_time=app,
        last_step_timestamp=last,
        avg_step_time_sec=avg,
        log_interval=int(s.get("logInterval") or 0),
    )


def measurement_name(job: str, suffix: str) -> str:
    """``<job>-goodput`` / ``<job>-bandwidth`` (§1.3, truncated to 63)."""
    return truncate(f"{job}-{suffix}", 63)


def measurement_manifest(
    job: Mapping[str, Any], kind: str, suffix: str, asked: Mapping[str, Any]
) -> Obj:
    """The measurement the Job spec asks for: ``<job>-<suffix>``, owned by the Job's Workflow
    (§1: measurements are kept with the Workflow for the report), else by the Job."""
    meta = job.get("metadata") or {}
    name = str(meta.get("name") or "")
    owners = [r for r in meta.get("ownerReferences") or () if r.get("controller")]
    labels = {MANAGED_BY_KEY: MANAGED_BY, JOB_LABEL: name}
    workflow = (meta.get("labels") or {}).get(WORKFLOW_LABEL)
    if workflow:
        labels[WORKFLOW_LABEL] = str(workflow)
    spec: Obj = {
        "jobRef": {"apiGroup": MEASUREMENT_REF_GROUP, "kind": "Job", "name": name},
        "logProfileRef": str(asked.get("logProfileRef") or ""),
        "sampleInterval": str(asked.get("sampleInterval") or "60s"),
    }
    if kind == "BandwidthMeasurement" and asked.get("testType"):
        spec["testType"] = str(asked["testType"])
    return {
        "apiVersion": CERTIFY_API_VERSION,
        "kind": kind,
        "metadata": {
            "name": measurement_name(name, suffix),
            "namespace": str(meta.get("namespace") or "default"),
            "labels": labels,
            "ownerReferences": [dict(owners[0])] if owners else [owner_reference(job)],
        },
        "spec": spec,
    }
