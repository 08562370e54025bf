"""The workload of a certify Job: the TrainJob built from ``spec.workload.trainJob`` (§3.3), its
pods, and which of them speaks for the job (pure functions over plain JSON).

* **TrainJob** ``<job>-workload`` (§1.3): the Job's trainJob spec with the controller's
  runtimePatch adding the pod label ``certify.glimmer.ai/job=<job>`` on the worker replicated
  job (``node``), so a Node event maps back to the Job through its pods; labels
  ``workloadMetadata.labels`` + managed-by + the job label (a workload label naming one of ours
  is refused: it would redirect the mapping); owned by the Job.
* **Pods**: Kubeflow Trainer runs a TrainJob as a JobSet of the same name, whose pods carry
  ``jobset.sigs.k8s.io/jobset-name``; the worker pods also carry our job label. Both are read,
  so the launcher of an MPI job (not a worker) is found too.
* **The speaker** (rank 0): the launcher — the pod of the step labelled
  ``trainer.kubeflow.org/trainjob-ancestor-step=trainer`` — before any worker, first by name;
  its ``node`` container holds the collective's table and the training log.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from glimmer.backends.kubernetes.certify.ledger import owner_reference
from glimmer.backends.kubernetes.certify.resources import TRAINER_API_VERSION
from glimmer.certify.catalog.naming import workload_name
from glimmer.certify.job_rules import pod_name, timeout_log_source
from glimmer.certify.platform.vocab import (
    CONTROLLER_PATCH_MANAGER,
    GROUP_LABEL,
    JOB_LABEL,
    MANAGED_BY,
    MANAGED_BY_KEY,
    NODE,
)
from glimmer.errors import InputError, Location
from glimmer.operator.certify.job_status import get as _get

Obj = dict[str, Any]
JOBSET_LABEL = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_LABEL = "jobset.sigs.k8s.io/replicatedjob-name"


def job_label_patch(job: str) -> Obj:
    """The controller's runtimePatch: the job label on the worker pods (§1.2)."""
    pod = {"metadata": {"labels": {JOB_LABEL: job}}}
    return {
        "manager": CONTROLLER_PATCH_MANAGER,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [{"name": NODE, "template": {"spec": {"template": pod}}}]
                }
            }
        },
    }


def _has_job_label(train_job: Mapping[str, Any], job: str) -> bool:
    for patch in train_job.get("runtimePatches") or ():
        jobs = _get(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs") or ()
        for rj in jobs:
            labels = _get(rj, "template", "spec", "template", "metadata", "labels") or {}
            if _get(rj, "name") == NODE and labels.get(JOB_LABEL) == job:
                return True
    return False


def train_job_manifest(job: Mapping[str, Any]) -> Obj:
    """The TrainJob of the Job object ``job``; InputError naming the Job and field when its
    spec cannot make one."""
    meta = job.get("metadata") or {}
    name = str(meta.get("name") or "")
    where = Location(obj=f"Job/{name}", field="spec.workload.trainJob")
    spec = _get(job, "spec", "workload", "trainJob")
    if not isinstance(spec, Mapping):
        raise InputError("the Job has no TrainJob workload", where)
    train: Obj = copy.deepcopy(dict(spec))
    if not _has_job_label(train, name):
        train.setdefault("runtimePatches", []).append(job_label_patch(name))
    ours = {MANAGED_BY_KEY: MANAGED_BY, JOB_LABEL: name}
    # The core's job name (screen-0, bisect-2-0a, a node) as the Job carries it: a user selects
    # a group's workloads by it, and a simulating Trainer names (seeds) the job by it as the
    # simulator's own substrate does.
    group = (meta.get("labels") or {}).get(GROUP_LABEL)
    if group:
        ours[GROUP_LABEL] = str(group)
    extra = dict(_get(job, "spec", "workloadMetadata", "labels") or {})
    clash = sorted(k for k in extra if k in ours and extra[k] != ours[k])
    if clash:
        raise InputError(
            f"workloadMetadata.labels sets {', '.join(clash)}, which the controller owns",
            Location(obj=f"Job/{name}", field="spec.workloadMetadata.labels"),
        )
    return {
        "apiVersion": TRAINER_API_VERSION,
        "kind": "TrainJob",
        "metadata": {
            "name": workload_name(name),
            "namespace": str(meta.get("namespace") or "default"),
            "labels": {**extra, **ours},
            "ownerReferences": [owner_reference(job)],
        },
        "spec": train,
    }


def workload_ref(train_job: Mapping[str, Any]) -> Obj:
    meta = train_job.get("metadata") or {}
    return {
        "apiVersion": TRAINER_API_VERSION,
        "kind": "TrainJob",
        "name": str(meta.get("name") or ""),
        "namespace": str(meta.get("namespace") or "default"),
    }


# ---- the workload's state --------------------------------------------------------------------


def train_job_condition(train_job: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for c in _get(train_job, "status", "conditions") or ():
        if isinstance(c, Mapping) and c.get("type") == kind and c.get("status") == "True":
            return c
    return None


def suspended(train_job: Mapping[str, Any]) -> bool:
    return bool(_get(train_job, "spec", "suspend")) or (
        train_job_condition(train_job, "Suspended") is not None
    )


def running(train_job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the workload runs: a pod of it Running, or the JobSet's jobs active (a workload
    that exists but waits, e.g. suspended by a queue, is Pending: no clock runs for it)."""
    if suspended(train_job):
        return False
    if any(_get(p, "status", "phase") == "Running" for p in pods):
        return True
    return any(
        int(_get(s, "active") or 0) > 0 or int(_get(s, "ready") or 0) > 0
        for s in _get(train_job, "status", "jobsStatus") or ()
    )


def pods_on(pods: Sequence[Mapping[str, Any]]) -> list[str]:
    """The nodes the pods run on, sorted (a pod not yet bound is on none)."""
    return sorted({str(n) for p in pods if (n := _get(p, "spec", "nodeName"))})


def merged_pods(*lists: Sequence[Mapping[str, Any]]) -> list[Obj]:
    """Pods from several reads, once each, by name."""
    seen: dict[str, Obj] = {}
    for pods in lists:
        for p in pods:
            seen.setdefault(pod_name(p), dict(p))
    return [seen[n] for n in sorted(seen)]


def speaker(pods: Sequence[Mapping[str, Any]]) -> tuple[str, str, str] | None:
    """(pod, container, node) of the workload's rank 0, None without pods."""
    source = timeout_log_source(list(pods))
    if source is None:
        return None
    return source.pod_name, source.container, source.node_name


def _terminated(pod: Mapping[str, Any], container: str) -> Mapping[str, Any] | None:
    for status in _get(pod, "status", "containerStatuses") or ():
        if _get(status, "name") == container:
            ended = _get(status, "state", "terminated") or _get(status, "lastState", "terminated")
            return ended if isinstance(ended, Mapping) else None
    return None


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def exit_code(pods: Sequence[Mapping[str, Any]], pod: str, container: str) -> int | None:
    """The exit code of ``pod``'s ``container``, None while it has not ended."""
    for p in pods:
        if pod_name(p) == pod:
            ended = _terminated(p, container)
            return int(ended.get("exitCode") or 0) if ended is not None else None
    return None


def elapsed_seconds(pods: Sequence[Mapping[str, Any]], pod: str, container: str) -> float:
    """How long ``pod``'s ``container`` ran (started to finished; 0 when unknown)."""
    for p in pods:
        if pod_name(p) != pod:
            continue
        ended = _terminated(p, container) or {}
        start = _time(ended.get("startedAt")) or _time(_get(p, "status", "startTime"))
        end = _time(ended.get("finishedAt"))
        if start is not None and end is not None:
            return max(0.0, (end - start).total_seconds())
    return 0.0


def last_line(text: str) -> str:
    """The last non-blank line of a log: the error a failed job ended with."""
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()
    return ""


MNNVL_VAR = "NCCL_MNNVL_ENABLE"


def mnnvl_setting(job: Mapping[str, Any]) -> bool | None:
    """NCCL_MNNVL_ENABLE as the Job's trainer sets it (an env var or a ``-x VAR=v`` argument);
    None when unset (the core's default then decides)."""
    trainer = _get(job, "spec", "workload", "trainJob", "trainer") or {}
    for item in _get(trainer, "env") or ():
        if _get(item, "name") == MNNVL_VAR:
            return str(_get(item, "value") or "") not in ("0", "false", "")
    for arg in [*(_get(trainer, "args") or ()), *(_get(trainer, "command") or ())]:
        text = str(arg)
        if f"{MNNVL_VAR}=" in text:
            value = (
                text.split(f"{MNNVL_VAR}=", 1)[1].split()[0]
                if text.split(f"{MNNVL_VAR}=", 1)[1]
                else ""
            )
            return value not in ("0", "false", "")
    return None
