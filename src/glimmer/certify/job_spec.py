"""The Job one core job becomes on a cluster (specs/certify.md §2.4, §3.2 createJobForGroup).

From the Workflow spec as :func:`~glimmer.certify.catalog.build.build_workflow_spec` renders it
(after the resolved transforms), for one job of the replayed core (issue 17, decision 3):

* ``jobTemplate.spec`` copied; ``validation.performance`` thresholds and measurementTimeout
  carried onto the Job;
* the job-scoped dependencies copied under ``-<wfHash><key tail>`` (§1.3, §3.4: the tail of
  the Job name after the Workflow's, i.e. ``-<group>-iter-<n>`` when the name was not cut),
  and the job spec rewritten to name the copies;
* the group pinned by required node affinity ``kubernetes.io/hostname In <nodes>`` on every
  replicated job the runtime patches target (the worker ``node`` and, for MPI, the
  ``launcher`` the catalog registers), through the controller's own runtime patch, which also
  labels the pods with the Job (node events map back to it) and carries the tolerations
  (ADR-063);
* ``trainer.numNodes`` = the group's size (overflow, bisection, one DCGM node);
* the §7.4 MNNVL override for a job the core runs with NVLink off;
* the node health monitor defaulted, or dropped when the target certifies cordoned nodes.

The Job's labels and annotations (workflow, group, group-nodes) are the ledger's: they name
the Job object, not its spec.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from glimmer.certify.catalog.naming import extract_hash
from glimmer.certify.catalog.scope import rename_job_scoped
from glimmer.certify.grouping import UNSCHEDULABLE_TAINT
from glimmer.certify.jobs import DcgmJob, Job, TrainingJob
from glimmer.certify.platform.vocab import (
    CONTROLLER_PATCH_MANAGER,
    JOB_LABEL,
    LAUNCHER,
    NODE,
)
from glimmer.certify.platform.walk import get_path

Obj = dict[str, Any]

HOSTNAME_LABEL = "kubernetes.io/hostname"
DEFAULT_HEALTH = "node.spec.unschedulable == true"  # §3.2: a cordoned node fails its Job
MNNVL_VAR = "NCCL_MNNVL_ENABLE"


@dataclass(frozen=True)
class JobParts:
    """What a Workflow creates for one core job: the Job spec and its own dependency copies
    (in the Workflow's order; only the job-scoped ones, renamed)."""

    spec: Obj
    dependencies: list[Obj]


def job_scoped_suffix(workflow: str, key: str) -> str:
    """The suffix of the dependency copies of Job ``key`` of ``workflow`` (§1.3): the Job
    name's tail after the Workflow's (``-<group>-iter-<n>``), or the hash a cut name ends with."""
    whole = key.startswith(f"{workflow}-")
    tail = key.removeprefix(workflow) if whole else f"-{extract_hash(key)}"
    return f"-{extract_hash(workflow)}{tail}"


def _targets(train_job: Mapping[str, Any]) -> list[str]:
    """The replicated jobs the runtime patches name, the worker first."""
    names = [NODE]
    for patch in train_job.get("runtimePatches") or []:
        jobs = get_path(patch, "trainingRuntimeSpec", "template", "spec", "replicatedJobs") or []
        for rj in jobs:
            name = rj.get("name") if isinstance(rj, dict) else None
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


def tolerations(target: Mapping[str, Any], targets: Sequence[str]) -> list[Obj]:
    """ADR-063: a toleration per taint selector (Equal with its value, else Exists; the effect
    copied); else a blanket Exists for MPI (its launcher must reach any node); else none. A
    target that certifies cordoned nodes also tolerates the cordon taint."""
    out: list[Obj] = []
    for sel in target.get("taintSelectors") or []:
        t: Obj = {"key": sel["key"]}
        if sel.get("value"):
            t.update(operator="Equal", value=sel["value"])
        else:
            t["operator"] = "Exists"
        if sel.get("effect"):
            t["effect"] = sel["effect"]
        out.append(t)
    if not out and LAUNCHER in targets:
        out.append({"operator": "Exists"})
    blanket = any(t.get("operator") == "Exists" and "key" not in t for t in out)
    cordon = any(t.get("key") == UNSCHEDULABLE_TAINT for t in out)
    if keeps_unschedulable(target) and not blanket and not cordon:
        out.append({"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"})
    return out


def keeps_unschedulable(target: Mapping[str, Any]) -> bool:
    """The target certifies cordoned nodes: includeUnschedulable, or the cordon taint selected."""
    return bool(target.get("includeUnschedulable")) or any(
        s.get("key") == UNSCHEDULABLE_TAINT for s in target.get("taintSelectors") or []
    )


def _pinning_patch(
    key: str, nodes: Sequence[str], targets: Sequence[str], tolerate: Sequence[Obj]
) -> Obj:
    pod_spec: Obj = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": HOSTNAME_LABEL, "operator": "In", "values": list(nodes)}
                            ]
                        }
                    ]
                }
            }
        }
    }
    if tolerate:
        pod_spec["tolerations"] = [dict(t) for t in tolerate]
    pod = {"metadata": {"labels": {JOB_LABEL: key}}, "spec": pod_spec}
    return {
        "manager": CONTROLLER_PATCH_MANAGER,
        "trainingRuntimeSpec": {
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {"name": name, "template": {"spec": {"template": copy.deepcopy(pod)}}}
                        for name in targets
                    ]
                }
            }
        },
    }


def mnnvl_off(trainer: Obj) -> None:
    """§7.4: ``NCCL_MNNVL_ENABLE=0`` replacing the trainer argument that sets it, else the
    trainer env var, else appended to the trainer env."""
    args = trainer.get("args")
    if isinstance(args, list):
        for i, arg in enumerate(args):
            if isinstance(arg, str) and arg.startswith(f"{MNNVL_VAR}="):
                args[i] = f"{MNNVL_VAR}=0"
                return
    env = trainer.setdefault("env", [])
    for var in env:
        if var.get("name") == MNNVL_VAR:
            var.pop("valueFrom", None)
            var["value"] = "0"
            return
    env.append({"name": MNNVL_VAR, "value": "0"})


def _health(spec: Obj, target: Mapping[str, Any]) -> None:
    monitor = get_path(spec, "nodeHealthMonitor", "cel", "expression")
    if monitor is None:
        spec["nodeHealthMonitor"] = {"cel": {"expression": DEFAULT_HEALTH}}
        monitor = DEFAULT_HEALTH
    if keeps_unschedulable(target) and str(monitor).strip() == DEFAULT_HEALTH:
        # A cordoned node is what this target certifies: the default would fail every Job.
        del spec["nodeHealthMonitor"]


def job_parts(
    workflow: str, workflow_spec: Mapping[str, Any], key: str, job: Job, nodes: Sequence[str]
) -> JobParts:
    """The Job spec of ``job`` (Job name ``key``, pinned to ``nodes``) in ``workflow``, whose
    resolved spec is ``workflow_spec``, and the dependency copies it names."""
    template = get_path(workflow_spec, "jobTemplate", "spec") or {}
    deps, spec = rename_job_scoped(
        workflow_spec.get("dependencies") or [],
        copy.deepcopy(dict(template)),
        job_scoped_suffix(workflow, key),
        workflow_spec.get("gangScheduler"),
    )
    performance = get_path(workflow_spec, "validation", "performance") or {}
    thresholds = get_path(performance, "thresholds", "thresholds")
    if thresholds:
        spec["thresholds"] = dict(thresholds)
    if performance.get("measurementTimeout"):
        spec["measurementTimeout"] = performance["measurementTimeout"]
    target = get_path(workflow_spec, "orchestration", "target") or {}
    train_job: Obj = spec.setdefault("workload", {}).setdefault("trainJob", {})
    targets = _targets(train_job)
    train_job.setdefault("runtimePatches", []).append(
        _pinning_patch(key, nodes, targets, tolerations(target, targets))
    )
    trainer: Obj = train_job.setdefault("trainer", {})
    trainer["numNodes"] = len(nodes)
    if not isinstance(job, DcgmJob) and not job.nvlink:
        mnnvl_off(trainer)
    if isinstance(job, TrainingJob) and isinstance(spec.get("checkpoint"), dict):
        # The restarts the core's job allows, unless the template (the owner) set its own.
        spec["checkpoint"].setdefault("maxRestarts", job.max_restarts)
    _health(spec, target)
    originals = workflow_spec.get("dependencies") or []
    copies = [d for d, o in zip(deps, originals, strict=True) if _name(d) != _name(o)]
    return JobParts(spec, copies)


def _name(dep: Any) -> str:
    return str((dep.get("metadata") or {}).get("name", "")) if isinstance(dep, dict) else ""
