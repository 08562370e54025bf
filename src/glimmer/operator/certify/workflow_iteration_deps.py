"""Iteration-scoped dependencies (specs/certify.md §3.2 handleIterationComplete "clean
iteration-scoped deps", §3.4 "copied per group+iteration"): a Job's own dependency copies
(its TrainingRuntime, a ComputeDomain and its claim template) are made for one group in one
iteration, and their refs say which (``scope: job``, ``groupName`` the Job, ``iteration``).

Before iteration ``n`` creates its first Job, the copies of every earlier iteration are deleted
in reverse creation order — but only once the pods of the Jobs they served have drained (a
ComputeDomain deleted under a live pod's DRA allocation fails it with CUDA error 719, §7.5).
Until then the new Job is not created (:class:`IterationNotDrained`, a
:class:`~glimmer.backends.kubernetes.certify.ledger.NotReady`: the replay waits and the next
pass looks again). The earlier iterations' Jobs themselves stay: they are the replay's ledger.
The last iteration's copies stay until the Workflow is deleted, as §3.2 keeps them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from glimmer.backends.kubernetes.certify.ledger import NotReady
from glimmer.operator.certify.dependencies import delete_in_reverse
from glimmer.operator.certify.job_endings import JobReads
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, kind_of, meta

DRAINED = frozenset({"Succeeded", "Failed"})  # a pod in these phases holds no device


class IterationNotDrained(NotReady):
    """An earlier iteration's copies are not gone yet: its pods still run, or a copy is still
    being deleted."""


def for_iteration(refs: Sequence[Mapping[str, Any]], iteration: int) -> list[Obj]:
    """``refs`` (a Job's own copies) marked with the iteration that made them."""
    return [{**r, "iteration": iteration} for r in refs]


def earlier(refs: Sequence[Mapping[str, Any]], iteration: int) -> list[Obj]:
    """The refs, in creation order, of the Job copies of iterations before ``iteration``."""
    return [
        dict(r)
        for r in refs
        if r.get("scope") == "job"
        and isinstance(r.get("iteration"), int)
        and r["iteration"] < iteration
    ]


def clean_earlier(
    cluster: Cluster,
    workflow: Mapping[str, Any],
    refs: Sequence[Mapping[str, Any]],
    jobs: Mapping[str, Mapping[str, Any]],
    iteration: int,
    now: Callable[[], datetime],
) -> None:
    """Delete the copies of the iterations before ``iteration`` (reverse creation order, this
    Workflow's own only) once the pods of the Jobs they served have drained; raise
    :class:`IterationNotDrained` while any is left."""
    old = earlier(refs, iteration)
    left = [r for r in old if cluster.get(kind_of(r), str(r["name"]), r.get("namespace"))]
    if not left:
        return
    reads = JobReads(cluster.client, now)
    served = dict.fromkeys(str(r.get("groupName") or "") for r in left)
    running = [
        str(meta(p).get("name"))
        for name in served
        if name in jobs
        for p in reads.pods(jobs[name])
        if (p.get("status") or {}).get("phase") not in DRAINED
    ]
    if running:
        raise IterationNotDrained(
            f"iteration {iteration} waits for the pods of iteration {iteration - 1} to drain "
            f"before its dependency copies are deleted: {', '.join(running)}"
        )
    if delete_in_reverse(cluster, left, workflow):
        raise IterationNotDrained(
            f"iteration {iteration} waits for the dependency copies of earlier iterations "
            "to be deleted"
        )
