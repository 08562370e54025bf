"""Gang scheduling of catalog runtimes after overrides resolve, and the resolved intent.

A gang scheduler spec is a plain mapping: ``schedulerName``, optional ``queue`` and
``queueLabelKey``. Functions return new values and never change their inputs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.certify.platform.scripts import LAUNCHER_WAIT_SCRIPT
from glimmer.certify.platform.vocab import (
    DEFAULT_QUEUE,
    DEFAULT_QUEUE_LABEL_KEY,
    HOSTFILE_DIR,
    HOSTFILE_VOLUME,
    KAI_SCHEDULER,
    LAUNCHER,
    NODE,
    SSH_AUTH_PATH,
    SSH_AUTH_VOLUME,
    SSH_DIR,
    SSH_KEYS_VOLUME,
    WAIT_FOR_WORKERS,
)
from glimmer.certify.platform.walk import (
    check_dependencies,
    ensure_map,
    get_path,
    training_runtime_jobs,
)

Obj = dict[str, Any]
GangScheduler = Mapping[str, Any]

# The one launcher gate the KAI rewrite replaces; any other dependsOn keeps its meaning.
NODE_READY_GATE: list[Obj] = [{"name": NODE, "status": "Ready"}]


def resolved_gang_scheduler(gs: GangScheduler | None) -> Obj | None:
    """A copy of ``gs`` with ``queue`` and ``queueLabelKey`` defaulted, so it can be persisted and
    compared later; None when ``gs`` configures nothing (absent or an empty schedulerName)."""
    if not gs or not gs.get("schedulerName"):
        return None
    out: Obj = copy.deepcopy(dict(gs))
    out["queue"] = out.get("queue") or DEFAULT_QUEUE
    out["queueLabelKey"] = out.get("queueLabelKey") or DEFAULT_QUEUE_LABEL_KEY
    return out


def _wait_for_workers(image: str) -> Obj:
    return {
        "name": WAIT_FOR_WORKERS,
        "image": image,
        "command": ["sh", "-c"],
        "args": [LAUNCHER_WAIT_SCRIPT],
        "volumeMounts": [
            {"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR, "readOnly": True},
            {"name": SSH_AUTH_VOLUME, "mountPath": SSH_AUTH_PATH, "readOnly": True},
            {"name": SSH_KEYS_VOLUME, "mountPath": SSH_DIR},
        ],
    }


def _kai_launcher_rewrite(dep: Obj) -> None:
    # KAI admits a PodGroup only when every sub-group has pods; a launcher gated on the workers
    # is empty until they are Ready and never admitted. Move the wait inside the launcher pod.
    jobs = get_path(dep, "spec", "template", "spec", "replicatedJobs")
    launcher = next(
        (j for j in jobs or [] if isinstance(j, dict) and j.get("name") == LAUNCHER), None
    )
    if launcher is None or launcher.get("dependsOn") != NODE_READY_GATE:
        return
    del launcher["dependsOn"]
    jobset = get_path(dep, "spec", "template", "spec")
    if isinstance(jobset, dict):
        jobset.pop("startupPolicy", None)
    pod = ensure_map(launcher, "template", "spec", "template", "spec")
    containers = pod.get("containers") or []
    image = next((c["image"] for c in containers if isinstance(c, dict) and c.get("image")), "")
    inits = pod.setdefault("initContainers", [])
    if not any(isinstance(c, dict) and c.get("name") == WAIT_FOR_WORKERS for c in inits):
        inits.append(_wait_for_workers(image))


def apply_gang_scheduler_to_dependencies(
    deps: Sequence[Any], gs: GangScheduler | None
) -> list[Any]:
    """Every TrainingRuntime dependency rewritten so each replicated job runs under ``gs``.

    The pod's schedulerName is overwritten (catalog entries hardcode default-scheduler and the
    point is to replace it); the queue label goes on the job template and the pod template
    metadata, created where missing. For KAI with an MPI runtime the launcher's node-ready gate
    and the JobSet startupPolicy are removed and a wait-for-workers init container appended.
    A no-op (a plain copy) when ``gs`` is None or names no scheduler.
    """
    out = copy.deepcopy(list(deps))
    resolved = resolved_gang_scheduler(gs)
    if resolved is None:
        return out
    check_dependencies(out)
    key, queue = resolved["queueLabelKey"], resolved["queue"]
    for dep in out:
        touched = False
        for job in training_runtime_jobs(dep):
            touched = True
            ensure_map(job, "template", "spec", "template", "spec")["schedulerName"] = resolved[
                "schedulerName"
            ]
            ensure_map(job, "template", "metadata", "labels")[key] = queue
            ensure_map(job, "template", "spec", "template", "metadata", "labels")[key] = queue
        mpi = get_path(dep, "spec", "mlPolicy", "mpi") is not None
        if touched and mpi and resolved["schedulerName"] == KAI_SCHEDULER:
            _kai_launcher_rewrite(dep)
    return out
