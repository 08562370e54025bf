"""A Workflow's deletion (ADR-053): its Jobs first, then its dependencies, then its volumes,
then its finalizer.

Each pass stamps the volumes of checkpoint claims bound since the last one, deletes the
Workflow's Jobs (UID precondition) and waits until none remain (their finalizers wait for their
pods), then deletes its dependencies in reverse creation order (only those with its identity),
then sets each stamped volume's reclaim policy to Delete once Released
(:mod:`.workflow_volumes`), and only then drops the finalizer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from glimmer.backends.kubernetes.certify.resources import JOBS, WORKFLOWS
from glimmer.certify.platform.vocab import GROUP, WORKFLOW_LABEL
from glimmer.engine.backend import Conflict
from glimmer.operator.certify.certification_build import controlled_by
from glimmer.operator.certify.dependencies import delete_in_reverse as delete_dependencies
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, meta
from glimmer.operator.certify.workflow_volumes import release_volumes, stamp_volumes

FINALIZER = f"{GROUP}/workflow-finalizer"
DELETION_POLL = 1.0  # seconds between looks while what the Workflow owns goes


def finalizers(obj: Mapping[str, Any]) -> list[str]:
    return list(meta(obj).get("finalizers") or ())


def finalize(cluster: Cluster, wf: Obj) -> float | None:
    """One deletion pass over ``wf``: the seconds until the next, None once it is released."""
    if FINALIZER not in finalizers(wf):
        return None
    namespace = str(meta(wf).get("namespace") or "default")
    uid = str(meta(wf).get("uid") or "")
    refs = (wf.get("status") or {}).get("dependencyRefs") or []
    stamped = stamp_volumes(cluster, wf, refs)  # a claim bound since the last pass
    if stamped is not None:
        status = {**(wf.get("status") or {}), "dependencyRefs": stamped}
        wf = cluster.write_status(WORKFLOWS, {**wf, "status": status})
        refs = stamped
    jobs = cluster.items(JOBS, namespace, {WORKFLOW_LABEL: str(meta(wf).get("name"))})
    mine = [j for j in jobs if controlled_by(j, uid)]
    for job in mine:
        if not meta(job).get("deletionTimestamp"):
            with contextlib.suppress(Conflict):
                cluster.delete(JOBS, meta(job)["name"], namespace, uid=meta(job)["uid"])
    if mine:
        return DELETION_POLL  # until every Job is gone (their finalizers wait for pods)
    if delete_dependencies(cluster, refs, wf):
        return DELETION_POLL
    waiting = release_volumes(cluster, wf, refs)  # the claims are gone: their volumes
    if waiting is not None:
        return waiting
    kept = [f for f in finalizers(wf) if f != FINALIZER]
    cluster.replace(WORKFLOWS, {**wf, "metadata": {**meta(wf), "finalizers": kept}})
    return None
