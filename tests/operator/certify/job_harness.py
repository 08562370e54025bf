"""What the Job and measurement controllers' tests build by hand on an API stand-in with no
Trainer and no kubelet: Jobs as a Workflow creates them, the pods Kubeflow Trainer's JobSet
would run (labels, node, phase, container states), TrainJob status, and the logs a kubelet
would keep."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.operator.certify.job_reconcile import JobReconciler
from tests.operator.certify.conftest import NS, JobAPI, JobClock

GPU_UNHEALTHY = "node.status.conditions.exists(c, c.type == 'GPUHealthy' && c.status == 'False')"


def job_body(
    name: str,
    nodes: Sequence[str],
    *,
    owner: Mapping[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "labels": {"certify.glimmer.ai/workflow": "wf", "certify.glimmer.ai/group": "group-0"},
        "annotations": {"certify.glimmer.ai/group-nodes": ",".join(nodes)},
    }
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "certify.glimmer.ai/v1alpha1",
                "kind": "Workflow",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    return {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "workload": {
                "trainJob": {
                    "runtimeRef": {"name": "nccl", "kind": "TrainingRuntime"},
                    "trainer": {"numNodes": len(nodes)},
                }
            },
            **spec,
        },
    }


def workflow_body(name: str = "wf", timeout: str = "10m") -> dict[str, Any]:
    return {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": name},
        "spec": {
            "jobTemplate": {"spec": {"workload": {"trainJob": {}}}},
            "orchestration": {"execution": {"timeoutPerJob": timeout}},
        },
    }


def add_node(api: JobAPI, name: str, conditions: Sequence[Mapping[str, str]] = ()) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}, *conditions]},
    }
    api.post("/api/v1/nodes", body)


def set_node_condition(api: JobAPI, name: str, kind: str, status: str) -> None:
    node = api.read(f"/api/v1/nodes/{name}")
    assert node is not None
    conditions = [c for c in node["status"].get("conditions") or () if c["type"] != kind]
    conditions.append({"type": kind, "status": status})
    api.put_status(f"/api/v1/nodes/{name}", {**node["status"], "conditions": conditions})


def add_pod(
    api: JobAPI,
    name: str,
    node: str,
    workload: str,
    *,
    job: str = "",
    launcher: bool = False,
    phase: str = "Running",
    exit_code: int | None = None,
    reason: str = "",
    log: str = "",
) -> None:
    """A pod of ``workload``'s JobSet on ``node``: the launcher (Trainer's ancestor step) or a
    worker (with the job label the runtimePatch injects); ``exit_code`` ends its container."""
    labels = {
        "jobset.sigs.k8s.io/jobset-name": workload,
        "jobset.sigs.k8s.io/replicatedjob-name": "launcher" if launcher else "node",
    }
    if launcher:
        labels["trainer.kubeflow.org/trainjob-ancestor-step"] = "trainer"
    if job:
        labels["certify.glimmer.ai/job"] = job
    api.post(
        f"/api/v1/namespaces/{NS}/pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": labels},
            "spec": {"nodeName": node, "containers": [{"name": "node", "image": "nccl"}]},
        },
    )
    set_pod(api, name, phase=phase, exit_code=exit_code, reason=reason)
    if log:
        api.write_log(name, log)


def set_pod(
    api: JobAPI, name: str, *, phase: str, exit_code: int | None = None, reason: str = ""
) -> None:
    state: dict[str, Any] = {"running": {"startedAt": "2026-12-02T03:00:00Z"}}
    if exit_code is not None:
        state = {
            "terminated": {
                "exitCode": exit_code,
                "reason": reason or ("Completed" if exit_code == 0 else "Error"),
                "startedAt": "2026-12-02T03:00:00Z",
                "finishedAt": "2026-12-02T03:02:30Z",
            }
        }
    api.put_status(
        f"/api/v1/namespaces/{NS}/pods/{name}",
        {
            "phase": phase,
            "startTime": "2026-12-02T03:00:00Z",
            "containerStatuses": [
                {
                    "name": "node",
                    "state": state,
                    "ready": phase == "Running",
                    "restartCount": 0,
                    "image": "nccl",
                    "imageID": "nccl@sha256:0",
                }
            ],
        },
    )


def set_train_job(api: JobAPI, name: str, condition: str = "", message: str = "") -> None:
    """TrainJob status as Trainer writes it: ``condition`` (Complete, Failed, Suspended) True."""
    status: dict[str, Any] = {"conditions": []}
    if condition:
        status["conditions"] = [
            {
                "type": condition,
                "status": "True",
                "reason": condition,
                "message": message,
                "lastTransitionTime": "2026-12-02T03:00:00Z",
            }
        ]
    api.put_status(api.trainer("trainjobs", name), status)


def reconciler(api: JobAPI, clock: JobClock) -> JobReconciler:
    return JobReconciler(api.client, clock.now, running_requeue=0.5)


def job_of(api: JobAPI, name: str) -> dict[str, Any]:
    found = api.read(api.certify("jobs", name))
    assert found is not None, name
    return found


def conditions_of(body: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """type -> (status, reason)."""
    return {
        c["type"]: (c["status"], c.get("reason", ""))
        for c in (body.get("status") or {}).get("conditions") or ()
    }


def events_of(api: JobAPI, name: str) -> list[tuple[str, str, str]]:
    got = api.read(f"/api/v1/namespaces/{NS}/events")
    assert got is not None
    return [
        (e["type"], e["reason"], e["message"])
        for e in got["items"]
        if e["involvedObject"]["name"] == name
    ]
