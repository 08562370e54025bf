"""A TrainJob's status as Kubeflow Trainer v2 writes it, from its JobSet's pods, as pure rules.

``jobsStatus``: one entry per replicated job (active, ready, succeeded, failed, suspended pods).
The JobSet finishes as JobSet decides: Failed as soon as a pod fails (no restarts: the
``failurePolicy`` of glimmer's runtimes allows none), Complete when every pod of the success
policy's target jobs has succeeded (``operator: All``; every job when the runtime names none).
The Trainer copies the JobSet's condition onto the TrainJob (``Complete``/``Failed`` with
JobSet's reason and message) and writes ``Suspended`` itself (True/Suspended while
``spec.suspend``, False/Resumed once resumed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tools.k8s_standin.trainer_template import REPLICATED_JOB

Obj = dict[str, Any]

COMPLETE = "Complete"
FAILED = "Failed"
SUSPENDED = "Suspended"
CONDITION_TEXT = {
    COMPLETE: ("AllJobsCompleted", "jobset completed successfully"),
    FAILED: ("FailedJobs", "jobset failed due to one or more job failures"),
    "suspended": ("Suspended", "TrainJob is suspended"),
    "resumed": ("Resumed", "TrainJob is resumed"),
}
_ACTIVE = ("Pending", "Running", "")


def phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def by_job(pods: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for pod in pods:
        out.setdefault(str(pod["metadata"]["labels"].get(REPLICATED_JOB, "")), []).append(pod)
    return out


def jobs_status(
    jobs: Sequence[str], pods: Sequence[Mapping[str, Any]], suspended: bool = False
) -> list[Obj]:
    """One ``jobsStatus`` entry per replicated job, in the runtime's order."""
    grouped = by_job(pods)
    out = []
    for name in jobs:
        mine = grouped.get(name, [])
        out.append(
            {
                "name": name,
                "active": sum(1 for p in mine if phase(p) in _ACTIVE),
                "ready": sum(1 for p in mine if phase(p) == "Running" and ready(p)),
                "succeeded": sum(1 for p in mine if phase(p) == "Succeeded"),
                "failed": sum(1 for p in mine if phase(p) == "Failed"),
                "suspended": 1 if suspended else 0,
            }
        )
    return out


def finished(
    expected: Mapping[str, int],
    pods: Sequence[Mapping[str, Any]],
    targets: Sequence[str],
) -> str | None:
    """``Failed``, ``Complete``, or None while the JobSet runs. ``expected``: pods per job;
    ``targets``: the success policy's jobs (every job when empty)."""
    if any(phase(p) == "Failed" for p in pods):
        return FAILED
    grouped = by_job(pods)
    names = list(targets) or list(expected)
    if all(
        sum(1 for p in grouped.get(n, []) if phase(p) == "Succeeded") >= expected.get(n, 1)
        for n in names
    ):
        return COMPLETE
    return None


def success_targets(runtime: Mapping[str, Any]) -> list[str]:
    policy = (((runtime.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
        "successPolicy"
    ) or {}
    return [str(t) for t in policy.get("targetReplicatedJobs") or []]


def set_condition(
    conditions: Sequence[Mapping[str, Any]], kind: str, status: bool, why: str, at: str
) -> list[Obj]:
    """``conditions`` with ``kind`` set (its transition time kept when the status stays)."""
    reason, message = CONDITION_TEXT[why]
    value = "True" if status else "False"
    out: list[Obj] = []
    found = False
    for c in conditions:
        if c.get("type") != kind:
            out.append(dict(c))
            continue
        found = True
        same = c.get("status") == value
        out.append(
            {
                "type": kind,
                "status": value,
                "reason": reason,
                "message": message,
                "lastTransitionTime": c.get("lastTransitionTime", at) if same else at,
            }
        )
    if not found:
        out.append(
            {
                "type": kind,
                "status": value,
                "reason": reason,
                "message": message,
                "lastTransitionTime": at,
            }
        )
    return out


def condition_true(status: Mapping[str, Any], kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or []
    )
