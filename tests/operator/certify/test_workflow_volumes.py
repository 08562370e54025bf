"""§3.2 PV stamping and Deletion on the API stand-in: the volume behind a Workflow's own
checkpoint claim is stamped with the Workflow's UID as soon as the claim binds; on deletion,
after its Jobs and dependencies are gone, the stamped volume's reclaim policy goes Retain →
Delete once it is Released (the finalizer held, 5 s at a time, while it is Bound); a volume
stamped by another Workflow is never touched. The stand-in binds nothing: the test plays the
cluster's binder and PV controller."""

from __future__ import annotations

from typing import Any

from tests.operator.certify.conftest import (
    NS,
    CertifyAPI,
    Controllers,
    run_workflow,
)
from tests.operator.certify.workflow_harness import hand_written

STAMP = "certify.glimmer.ai/workflow-uid"
PVS = "/api/v1/persistentvolumes"
PVCS = f"/api/v1/namespaces/{NS}/persistentvolumeclaims"


def _claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}  # fmt: skip


def _pv(api: CertifyAPI, name: str) -> dict[str, Any]:
    got = api.http.get(f"{PVS}/{name}")
    assert got.status_code == 200, got.text
    body: dict[str, Any] = got.json()
    return body


def _set_phase(api: CertifyAPI, name: str, phase: str) -> None:
    body = _pv(api, name)
    body["status"] = {"phase": phase}
    put = api.http.put(f"{PVS}/{name}/status", json=body)
    assert put.status_code == 200, put.text


def _bind(api: CertifyAPI, claim: str, volume: str, stamp: str | None = None) -> None:
    """What the binder does: a Retain volume claimed by ``claim``, both Bound."""
    pvc = api.http.get(f"{PVCS}/{claim}").json()
    annotations = {STAMP: stamp} if stamp else {}
    made = api.http.post(PVS, json={
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": volume, "annotations": annotations},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "persistentVolumeReclaimPolicy": "Retain", "hostPath": {"path": f"/v/{volume}"},
                 "claimRef": {"kind": "PersistentVolumeClaim", "namespace": NS, "name": claim,
                              "uid": pvc["metadata"]["uid"]}},
    })  # fmt: skip
    assert made.status_code == 201, made.text
    _set_phase(api, volume, "Bound")
    pvc["spec"]["volumeName"] = volume
    put = api.http.put(f"{PVCS}/{claim}", json=pvc)
    assert put.status_code == 200, put.text
    pvc = api.http.get(f"{PVCS}/{claim}").json()
    pvc["status"] = {"phase": "Bound"}
    put = api.http.put(f"{PVCS}/{claim}/status", json=pvc)
    assert put.status_code == 200, put.text


def _workflow_with_claims(ctl: Controllers) -> str:
    api = ctl.api

    def with_claims(spec: dict[str, Any]) -> None:
        spec["dependencies"] += [_claim("ckpt"), _claim("shared")]

    hand_written(ctl, "vol", with_claims)
    ctl.workflow.reconcile(NS, "vol")  # discovery
    ctl.workflow.reconcile(NS, "vol")  # dependencies, then the Jobs
    assert api.http.get(f"{PVCS}/ckpt").status_code == 200
    return "vol"


def test_a_bound_claims_volume_is_stamped_and_released_with_delete_after_the_workflow(
    controllers: Controllers,
) -> None:
    api = controllers.api
    name = _workflow_with_claims(controllers)
    _bind(api, "ckpt", "pv-ckpt")
    _bind(api, "shared", "pv-foreign", stamp="0000-another-workflow")
    controllers.workflow.reconcile(NS, name)
    wf = api.get("workflows", name)
    assert wf is not None
    uid = wf["metadata"]["uid"]
    assert _pv(api, "pv-ckpt")["metadata"]["annotations"][STAMP] == uid
    assert _pv(api, "pv-foreign")["metadata"]["annotations"][STAMP] == "0000-another-workflow"
    claims = {
        r["name"]: r for r in wf["status"]["dependencyRefs"] if r["kind"] == "PersistentVolumeClaim"
    }
    assert claims["ckpt"]["volumeName"] == "pv-ckpt" and "volumeName" not in claims["shared"]
    run_workflow(controllers, name)

    assert api.http.delete(api.path("workflows", name)).status_code == 200
    # Jobs, then dependencies (the claims among them), then the volumes: the claim is gone but
    # the PV controller has not released its volume yet.
    for _ in range(5):
        wait = controllers.workflow.reconcile(NS, name)
        if api.http.get(f"{PVCS}/ckpt").status_code == 404:
            break
    assert api.items("jobs", f"certify.glimmer.ai/workflow={name}") == []
    assert api.http.get(f"{PVCS}/ckpt").status_code == 404
    assert controllers.workflow.reconcile(NS, name) == 5.0
    assert api.get("workflows", name) is not None  # the finalizer holds while it is Bound
    assert _pv(api, "pv-ckpt")["spec"]["persistentVolumeReclaimPolicy"] == "Retain"

    for volume in ("pv-ckpt", "pv-foreign"):
        _set_phase(api, volume, "Released")  # the PV controller, the claims being gone
    assert controllers.workflow.reconcile(NS, name) is None
    assert api.get("workflows", name) is None
    assert _pv(api, "pv-ckpt")["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    assert _pv(api, "pv-foreign")["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert wait is not None


def test_a_volume_bound_to_another_claim_is_never_stamped(controllers: Controllers) -> None:
    api = controllers.api
    name = _workflow_with_claims(controllers)
    _bind(api, "ckpt", "pv-ckpt")
    # The claim's volumeName points at a volume whose claimRef is some other claim.
    pv = _pv(api, "pv-ckpt")
    pv["spec"]["claimRef"]["uid"] = "not-this-claim"
    assert api.http.put(f"{PVS}/pv-ckpt", json=pv).status_code == 200
    controllers.workflow.reconcile(NS, name)
    assert STAMP not in (_pv(api, "pv-ckpt")["metadata"].get("annotations") or {})
    wf = api.get("workflows", name)
    assert wf is not None
    assert all("volumeName" not in r for r in wf["status"]["dependencyRefs"])
