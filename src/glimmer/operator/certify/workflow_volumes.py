"""The PersistentVolumes behind a Workflow's checkpoint claims (specs/certify.md §3.2
updateStatusFromJobs and Deletion).

A checkpoint PVC is a dependency the Workflow creates; the volume the cluster binds to it is
not. A storage class that retains its volumes would keep every certification's checkpoints
after the Workflow and its claim are gone, so the Workflow:

* **stamps** the volume behind each claim it created with its UID (annotation
  ``certify.glimmer.ai/workflow-uid``) as soon as the claim is bound, and keeps the volume's
  name in the claim's ``dependencyRef`` (``volumeName``): the claim is deleted before the
  volume is released, and nothing else would say which volume was behind it;
* on **deletion**, once its Jobs and dependencies are gone, patches each stamped volume's
  reclaim policy ``Retain`` → ``Delete`` when the volume is ``Released`` (waiting, 5 s at a
  time, while it is still ``Bound``).

A volume is only ever touched when it is bound to this Workflow's own claim (its claimRef's
UID) or already carries this Workflow's stamp: a volume stamped by another Workflow, or
bound to another claim, is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.operator.certify.dependencies import WORKFLOW_UID_ANNOTATION
from glimmer.operator.certify.workflow_cluster import Cluster, Obj, meta, resource_for

PVCS = resource_for("v1", "PersistentVolumeClaim")
PVS = resource_for("v1", "PersistentVolume")
CLAIM_KIND = "PersistentVolumeClaim"
RETAIN, DELETE = "Retain", "Delete"
RELEASE_POLL = 5.0  # §3.2: requeue every 5 s while a stamped volume is still Bound


def _stamp(volume: Mapping[str, Any]) -> str | None:
    return (meta(volume).get("annotations") or {}).get(WORKFLOW_UID_ANNOTATION)


def _bound_volume(cluster: Cluster, ref: Mapping[str, Any], namespace: str) -> Obj | None:
    """The volume bound to the claim of ``ref``, when the claim is Bound and the volume's
    claimRef is that very claim."""
    claim = cluster.get(PVCS, str(ref["name"]), str(ref.get("namespace") or namespace))
    if claim is None or (claim.get("status") or {}).get("phase") != "Bound":
        return None
    name = (claim.get("spec") or {}).get("volumeName")
    if not name:
        return None
    volume = cluster.get(PVS, str(name), None)
    claim_ref = ((volume or {}).get("spec") or {}).get("claimRef") or {}
    if volume is None or claim_ref.get("uid") != meta(claim).get("uid"):
        return None
    return volume


def stamp_volumes(
    cluster: Cluster, workflow: Mapping[str, Any], refs: Sequence[Mapping[str, Any]]
) -> list[Obj] | None:
    """``refs`` with ``volumeName`` set on each claim whose bound volume this call stamped
    (or found stamped by this Workflow already); None when nothing changed."""
    uid = str(meta(workflow).get("uid") or "")
    namespace = str(meta(workflow).get("namespace") or "default")
    out: list[Obj] = []
    changed = False
    for ref in refs:
        out.append(dict(ref))
        if ref.get("kind") != CLAIM_KIND or ref.get("volumeName") or not uid:
            continue
        volume = _bound_volume(cluster, ref, namespace)
        if volume is None:
            continue
        stamp = _stamp(volume)
        if stamp is not None and stamp != uid:
            continue  # another Workflow's: never ours to release
        name = str(meta(volume)["name"])
        if stamp is None:
            patch = {
                "metadata": {
                    "annotations": {WORKFLOW_UID_ANNOTATION: uid},
                    "resourceVersion": meta(volume).get("resourceVersion"),
                }
            }
            cluster.patch(PVS, name, None, patch)
        out[-1]["volumeName"] = name
        changed = True
    return out if changed else None


def release_volumes(
    cluster: Cluster, workflow: Mapping[str, Any], refs: Sequence[Mapping[str, Any]]
) -> float | None:
    """Each volume ``refs`` recorded and this Workflow stamped: ``Retain`` → ``Delete`` once
    Released. :data:`RELEASE_POLL` while one is still Bound, else None (done)."""
    uid = str(meta(workflow).get("uid") or "")
    waiting = False
    for ref in refs:
        name = ref.get("volumeName")
        if ref.get("kind") != CLAIM_KIND or not name:
            continue
        volume = cluster.get(PVS, str(name), None)
        if volume is None or not uid or _stamp(volume) != uid:
            continue
        if (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy") != RETAIN:
            continue
        phase = (volume.get("status") or {}).get("phase")
        if phase == "Bound":
            waiting = True
        elif phase == "Released":
            patch = {
                "metadata": {"resourceVersion": meta(volume).get("resourceVersion")},
                "spec": {"persistentVolumeReclaimPolicy": DELETE},
            }
            cluster.patch(PVS, str(name), None, patch)
    return RELEASE_POLL if waiting else None
