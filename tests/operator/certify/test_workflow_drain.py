"""§3.2 completeTerminalGroup for a Job the health check failed (HardwareFailed=True, still
running), on the API stand-in: the Workflow deletes its workload and holds the group — the
core asks for nothing after it — until its pods are gone, or for at most the drain grace;
then the group is a hardware failure naming the node."""

from __future__ import annotations

import json
import time
from typing import Any

from glimmer.certify.result import category_from_doc
from tests.operator.certify.conftest import (
    NS,
    Controllers,
    condition,
    finish_job,
    is_true,
)
from tests.operator.certify.workflow_harness import level1_workflow

WF = "w-diagnostics-dcgm-level1"
MESSAGE = "Hardware failure detected on node(s): [gpu-02]"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _hardware_verdict(ctl: Controllers, job: dict[str, Any], node: str) -> None:
    """What the Job controller writes when the health check names ``node``: HardwareFailed,
    the failed node, the frozen outcome; InProgress stays (the Job keeps running)."""
    cond = {"status": "True", "lastTransitionTime": _now()}
    status = {
        "conditions": [
            {"type": "InProgress", "reason": "WorkloadRunning", "message": "running", **cond},
            {"type": "HardwareFailed", "reason": "HardwareFailureDetected", "message": MESSAGE,
             **cond},
        ],
        "workloadRef": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                        "name": f"{job['metadata']['name']}-workload"},
        "failedNodes": [{"name": node, "reason": "HardwareFailureDetected",
                         "message": "Hardware failure detected by node health check"}],
        "outcome": {"text": f"FAIL: {MESSAGE}\n", "exitCode": 1, "error": MESSAGE, "path": "",
                    "crashedOn": [node], "elapsedSeconds": 0.0},
    }  # fmt: skip
    body = {**job, "status": status}
    put = ctl.api.http.put(ctl.api.path("jobs", job["metadata"]["name"]) + "/status", json=body)
    assert put.status_code == 200, put.text


def _workload_and_pod(ctl: Controllers, job: str) -> None:
    trainjobs = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}/trainjobs"
    made = ctl.api.http.post(trainjobs, json={
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": f"{job}-workload"},
        "spec": {"runtimeRef": {"name": "dcgm", "kind": "TrainingRuntime"}},
    })  # fmt: skip
    assert made.status_code == 201, made.text
    pod = ctl.api.http.post(f"/api/v1/namespaces/{NS}/pods", json={
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{job}-node-0", "labels": {"certify.glimmer.ai/job": job}},
        "spec": {"nodeName": "gpu-02", "containers": [{"name": "node", "image": "dcgm"}]},
    })  # fmt: skip
    assert pod.status_code == 201, pod.text


def _started(ctl: Controllers) -> str:
    """The DCGM Workflow over two nodes with its Jobs; gpu-01's passed, gpu-02's health-failed
    with its workload and a pod still there. The Job on gpu-02, by name."""
    level1_workflow(ctl, cert="w")
    ctl.workflow.reconcile(NS, WF)  # discovery
    ctl.workflow.reconcile(NS, WF)  # the Jobs
    jobs = {j["metadata"]["labels"]["certify.glimmer.ai/group"]: j for j in ctl.api.items("jobs")}
    finish_job(ctl.api, jobs["gpu-01"])
    bad = jobs["gpu-02"]["metadata"]["name"]
    _workload_and_pod(ctl, bad)
    _hardware_verdict(ctl, jobs["gpu-02"], "gpu-02")
    return bad


def _trainjob(ctl: Controllers, job: str) -> int:
    path = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}/trainjobs/{job}-workload"
    return int(ctl.api.http.get(path).status_code)


def test_a_health_failed_group_is_held_until_its_pods_are_gone_then_named(
    controllers: Controllers,
) -> None:
    ctl = controllers
    bad = _started(ctl)
    ctl.workflow.reconcile(NS, WF)
    assert _trainjob(ctl, bad) == 404  # the Workflow deleted the workload
    wf = ctl.api.get("workflows", WF)
    assert wf is not None and condition(wf, "InProgress")["status"] == "True"  # type: ignore[index]
    groups = {g["name"]: g["phase"] for g in wf["status"]["orchestration"]["groups"]}
    assert groups == {"gpu-01": "Succeeded", "gpu-02": "Failed"}
    for _ in range(3):  # held while the pod drains, however often it is reconciled
        ctl.workflow.reconcile(NS, WF)
        assert not is_true(ctl.api.get("workflows", WF), "Failed")
    gone = ctl.api.http.delete(
        f"/api/v1/namespaces/{NS}/pods/{bad}-node-0?gracePeriodSeconds=0"
    )  # the kubelet
    assert gone.status_code == 200
    ctl.workflow.reconcile(NS, WF)
    wf = ctl.api.get("workflows", WF)
    failed = condition(wf, "Failed")
    assert failed is not None and failed["status"] == "True", wf
    assert failed["reason"] == "JobHardwareFailed"
    result = ctl.api.configmap(f"{WF}-result")
    assert result is not None
    cat = category_from_doc(json.loads(result["data"]["category.json"]))
    assert [(f.name, f.reason) for f in cat.failed_nodes] == [("gpu-02", "HardwareFailureDetected")]
    assert [g.failure for g in cat.groups if not g.passed] == ["HardwareFailureDetected"]
    job = ctl.api.get("jobs", bad)
    assert job is not None and "outcome" in job["status"]


def test_a_group_whose_pods_never_go_is_released_after_the_drain_grace(
    controllers: Controllers,
) -> None:
    ctl = controllers
    _started(ctl)
    ctl.workflow.reconcile(NS, WF)
    ctl.clock.advance(59)
    ctl.workflow.reconcile(NS, WF)
    assert not is_true(ctl.api.get("workflows", WF), "Failed")
    ctl.clock.advance(2)
    ctl.workflow.reconcile(NS, WF)
    failed = condition(ctl.api.get("workflows", WF), "Failed")
    assert failed is not None and failed["reason"] == "JobHardwareFailed"
