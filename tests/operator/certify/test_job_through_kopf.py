"""The Job controller through kopf (jobs_register.register): its daemon creates the workload,
a TrainJob event moves the Job on, and a Node event that a health expression sees fails the
Job. The safety-net requeue is set beyond the test's patience, so only the events can have
moved the Job."""

from __future__ import annotations

from typing import Any

import kopf
import pytest
from kopf.testing import KopfRunner

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.operator.certify import jobs_register
from glimmer.operator.certify.jobs_register import register
from glimmer.operator.context import OperatorContext
from tests.operator.certify.conftest import NS, JobAPI, eventually
from tests.operator.certify.job_harness import (
    GPU_UNHEALTHY,
    add_node,
    add_pod,
    conditions_of,
    job_body,
    job_of,
    set_node_condition,
    set_pod,
    set_train_job,
)

JOB = "wf-group-0-iter-1"
WORKLOAD = f"{JOB}-workload"


def runner(api: JobAPI) -> KopfRunner:
    context = OperatorContext.over(KubernetesBackend(api.client), NS, identity="test")
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry)(kopf.login_with_kubeconfig)
    register(registry, context)
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    return KopfRunner(
        ["run", "--standalone", "--namespace", NS], registry=registry, settings=settings, timeout=60
    )


def reason(api: JobAPI, kind: str) -> str:
    found = conditions_of(job_of(api, JOB)).get(kind)
    return found[1] if found and found[0] == "True" else ""


def test_kopf_drives_a_job_to_hardware_failed_on_a_node_event(
    job_api: JobAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jobs_register, "SAFETY_NET", 3600.0)
    for node in ("gpu-01", "gpu-02"):
        add_node(job_api, node)
    spec: dict[str, Any] = {"nodeHealthMonitor": {"cel": {"expression": GPU_UNHEALTHY}}}
    with runner(job_api) as kopf_run:
        job_api.post(job_api.certify("jobs"), job_body(JOB, ["gpu-01", "gpu-02"], **spec))
        eventually(lambda: job_api.read(job_api.trainer("trainjobs", WORKLOAD)), "the TrainJob")
        add_pod(job_api, "w-0", "gpu-01", WORKLOAD, job=JOB)
        add_pod(job_api, "w-1", "gpu-02", WORKLOAD, job=JOB)
        set_train_job(job_api, WORKLOAD)  # a TrainJob event: the Job looks again
        eventually(lambda: reason(job_api, "InProgress") == "WorkloadRunning", "running")
        set_node_condition(job_api, "gpu-02", "GPUHealthy", "False")
        eventually(lambda: reason(job_api, "HardwareFailed"), "HardwareFailed")
        job = job_of(job_api, JOB)
    assert kopf_run.exit_code == 0, kopf_run.output
    assert [f["name"] for f in job["status"]["failedNodes"]] == ["gpu-02"]
    assert not any(
        k.startswith("kopf.zalando.org") for k in job["metadata"].get("annotations") or {}
    )
    assert job["metadata"]["finalizers"] == ["certify.glimmer.ai/finalizer"]


def test_kopf_lets_a_deleted_job_go_once_its_pods_are_gone(job_api: JobAPI) -> None:
    add_node(job_api, "gpu-01")
    with runner(job_api) as kopf_run:
        job_api.post(job_api.certify("jobs"), job_body(JOB, ["gpu-01"]))
        eventually(lambda: job_api.read(job_api.trainer("trainjobs", WORKLOAD)), "the TrainJob")
        add_pod(job_api, "w-0", "gpu-01", WORKLOAD, job=JOB)
        set_pod(job_api, "w-0", phase="Succeeded", exit_code=0)
        set_train_job(job_api, WORKLOAD, "Complete")
        eventually(lambda: reason(job_api, "Succeeded"), "succeeded")
        assert job_api.http.delete(job_api.certify("jobs", JOB)).status_code == 200
        eventually(
            lambda: job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is None, "workload gone"
        )
        job_api.http.delete(f"/api/v1/namespaces/{NS}/pods/w-0")
        eventually(lambda: job_api.read(job_api.certify("jobs", JOB)) is None, "the Job gone")
    assert kopf_run.exit_code == 0, kopf_run.output
