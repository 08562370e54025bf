"""Checking that resolved manifests still place the workload in the queue its owner configured.

The two halves are deliberately asymmetric. The workload-object queue label is glimmer's to
write: it follows insert/same/conflict, so an override that removed it gets it back and one that
changed it fails. Runtime queue labels and pod scheduler names sit in dependency payloads the
operator may have redirected: a missing or different value fails and is never repaired, because
rewriting someone's override would hide the disagreement instead of surfacing it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.gang import GangScheduler, resolved_gang_scheduler
from glimmer.certify.platform.labels import LABELS_PATH, insert_consistent_label, validate_labels
from glimmer.certify.platform.vocab import (
    CLUSTER_TRAINING_RUNTIME,
    TRAINER_GROUP,
    TRAINING_RUNTIME,
)
from glimmer.certify.platform.walk import get_path

Obj = dict[str, Any]

_JOB_LABELS = ("template", "metadata", "labels")
_POD_LABELS = ("template", "spec", "template", "metadata", "labels")
_LEVELS = (
    ("template.metadata.labels", _JOB_LABELS),
    ("template.spec.template.metadata.labels", _POD_LABELS),
)


def _runtime_ref(train_job: Mapping[str, Any]) -> tuple[str, str, str]:
    # Trainer's own defaults: an absent group is trainer.kubeflow.org and an absent kind is
    # ClusterTrainingRuntime. An explicit empty string is kept, and fails below.
    ref = train_job.get("runtimeRef") or {}
    group = ref.get("apiGroup", TRAINER_GROUP)
    kind = ref.get("kind", CLUSTER_TRAINING_RUNTIME)
    return str(group), str(kind), str(ref.get("name", ""))


def _find_runtime(deps: Sequence[Any], group: str, name: str) -> Obj | None:
    for dep in deps:
        if not isinstance(dep, dict):
            continue
        dep_group = str(dep.get("apiVersion", "")).rpartition("/")[0]
        if (
            dep_group == group
            and dep.get("kind") == TRAINING_RUNTIME
            and get_path(dep, "metadata", "name") == name
        ):
            return dep
    return None


def _patch_labels(train_job: Mapping[str, Any], job_name: str, path: tuple[str, ...]) -> Obj:
    labels: Obj = {}
    for patch in train_job.get("runtimePatches") or []:
        jobs = get_path(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs")
        for job in jobs or []:
            if isinstance(job, dict) and job.get("name") == job_name:
                labels.update(get_path(job, *path) or {})
    return labels


def _check_runtime(train_job: Mapping[str, Any], deps: Sequence[Any], gs: Obj) -> None:
    group, kind, name = _runtime_ref(train_job)
    if group != TRAINER_GROUP or kind != TRAINING_RUNTIME:
        raise PlatformError(
            f"gangScheduler is configured but the workload's runtimeRef is {kind}.{group} "
            f"{name!r}; only a {TRAINING_RUNTIME}.{TRAINER_GROUP} among the dependencies can "
            "be checked"
        )
    runtime = _find_runtime(deps, group, name)
    if runtime is None:
        raise PlatformError(
            f"gangScheduler is configured but the workload's runtimeRef names {name!r}, which "
            f"is not among the Workflow's {TRAINING_RUNTIME}.{TRAINER_GROUP} dependencies"
        )
    key, queue = gs["queueLabelKey"], gs["queue"]
    jobs = get_path(runtime, "spec", "template", "spec", "replicatedJobs") or []
    for job in jobs:
        if not isinstance(job, dict):
            continue
        job_name = str(job.get("name", ""))
        where = f"TrainingRuntime {name!r} replicated job {job_name!r}"
        for shown, path in _LEVELS:
            labels = {**(get_path(job, *path) or {}), **_patch_labels(train_job, job_name, path)}
            got = labels.get(key)
            if got is None:
                raise PlatformError(f'{where}: {shown}["{key}"] is missing, expected "{queue}"')
            if got != queue:
                raise PlatformError(f'{where}: {shown}["{key}"] is "{got}", expected "{queue}"')
        scheduler = get_path(job, "template", "spec", "template", "spec", "schedulerName")
        if scheduler != gs["schedulerName"]:
            raise PlatformError(
                f"{where}: template.spec.template.spec.schedulerName is "
                f'"{scheduler or ""}", expected "{gs["schedulerName"]}"'
            )


def validate_resolved_gang_scheduling(
    js: Mapping[str, Any],
    deps: Sequence[Any],
    gs: GangScheduler | None,
    workload_labels_path: str = LABELS_PATH,
) -> Obj:
    """Check a resolved Job spec against the gang-scheduling intent; return the working copy
    with the workload-object queue label restored. ``gs`` is re-resolved, so a hand-authored
    intent naming only a scheduler checks the same queue the write paths would use. None (or
    no scheduler) is a no-op."""
    out: Obj = copy.deepcopy(dict(js))
    resolved = resolved_gang_scheduler(gs)
    if resolved is None:
        return out
    metadata = out.get("workloadMetadata") or {}
    labels = insert_consistent_label(
        metadata.get("labels"), resolved["queueLabelKey"], resolved["queue"], workload_labels_path
    )
    validate_labels(labels, workload_labels_path)
    out["workloadMetadata"] = {**metadata, "labels": labels}
    train_job = get_path(out, "workload", "trainJob")
    if not isinstance(train_job, dict):
        raise PlatformError(
            "gangScheduler is configured but spec.jobTemplate.spec.workload has no trainJob "
            "whose runtime could carry it"
        )
    _check_runtime(train_job, deps, resolved)
    return out


def validate_resolved_job_template(
    js: Mapping[str, Any],
    deps: Sequence[Any],
    gs: GangScheduler | None,
    workload_labels_path: str = LABELS_PATH,
) -> Obj:
    """Everything promised about a resolved Job spec; the entry point for every post-override
    call site. Workload labels are validated whatever the scheduling configuration (an offline
    render never meets admission); the gang contract is checked when an intent is set."""
    validate_labels(get_path(js, "workloadMetadata", "labels"), workload_labels_path)
    return validate_resolved_gang_scheduling(js, deps, gs, workload_labels_path)
