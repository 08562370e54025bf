"""The Job controller's guards (§3.2 timeout, §3.3 creation retries and deletion, §7.1 node
health, §7.5 thresholds): each from a Job driven by hand on the API stand-in."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from glimmer.engine.backend import BackendError
from tests.operator.certify.conftest import NS, JobAPI, JobClock
from tests.operator.certify.job_harness import (
    GPU_UNHEALTHY,
    add_node,
    add_pod,
    conditions_of,
    events_of,
    job_body,
    job_of,
    reconciler,
    set_node_condition,
    set_pod,
    set_train_job,
    workflow_body,
)

JOB = "wf-group-0-iter-1"
WORKLOAD = f"{JOB}-workload"


def running_job(api: JobAPI, clock: JobClock, *, owner: bool = False, **spec: Any) -> Any:
    for node in ("gpu-01", "gpu-02"):
        add_node(api, node)
    wf = api.post(api.certify("workflows"), workflow_body()) if owner else None
    api.post(api.certify("jobs"), job_body(JOB, ["gpu-01", "gpu-02"], owner=wf, **spec))
    rec = reconciler(api, clock)
    rec.reconcile(NS, JOB)
    add_pod(api, "l-0", "gpu-01", WORKLOAD, launcher=True, log="step 1\nstep 2\n")
    add_pod(api, "w-0", "gpu-01", WORKLOAD, job=JOB)
    add_pod(api, "w-1", "gpu-02", WORKLOAD, job=JOB)
    rec.reconcile(NS, JOB)
    assert conditions_of(job_of(api, JOB))["InProgress"] == ("True", "WorkloadRunning")
    return rec


def test_a_job_running_past_timeout_per_job_fails_with_the_launcher_log(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock, owner=True)  # the Workflow's timeoutPerJob: 10m
    clock.advance(9 * 60)
    rec.reconcile(NS, JOB)
    assert conditions_of(job_of(job_api, JOB))["InProgress"][0] == "True"
    clock.advance(2 * 60)
    rec.reconcile(NS, JOB)
    job = job_of(job_api, JOB)
    assert conditions_of(job)["Failed"] == ("True", "JobTimedOut")
    log = job["status"]["failureLog"]
    assert (log["podName"], log["reason"], log["tail"]) == ("l-0", "Timeout", "step 1\nstep 2\n")
    assert job["status"]["outcome"]["error"] == "Job exceeded timeoutPerJob"
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is None


def test_a_suspended_workload_never_times_out(job_api: JobAPI) -> None:
    clock = JobClock()
    add_node(job_api, "gpu-01")
    wf = job_api.post(job_api.certify("workflows"), workflow_body())
    job_api.post(job_api.certify("jobs"), job_body(JOB, ["gpu-01"], owner=wf))
    rec = reconciler(job_api, clock)
    rec.reconcile(NS, JOB)
    set_train_job(job_api, WORKLOAD, "Suspended")
    clock.advance(3600)
    rec.reconcile(NS, JOB)
    job = job_of(job_api, JOB)
    assert conditions_of(job)["InProgress"] == ("True", "WorkloadPending")
    assert "workloadStartTime" not in job["status"]


def test_a_healthy_node_change_leaves_the_job_running(job_api: JobAPI) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock, nodeHealthMonitor={"cel": {"expression": GPU_UNHEALTHY}})
    set_node_condition(job_api, "gpu-02", "GPUHealthy", "True")
    rec.reconcile(NS, JOB)
    assert conditions_of(job_of(job_api, JOB))["InProgress"] == ("True", "WorkloadRunning")


def test_a_refused_workload_create_is_retried_with_backoff_and_a_warning(
    job_api: JobAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = JobClock()
    add_node(job_api, "gpu-01")
    job_api.post(job_api.certify("jobs"), job_body(JOB, ["gpu-01"]))
    rec = reconciler(job_api, clock)
    real = rec.client.create
    refusals = []

    def refuse(obj: Any, *args: Any, **kwargs: Any) -> Any:
        if obj.kind == "TrainJob" and len(refusals) < 2:
            refusals.append(obj)
            raise BackendError("admission webhook denied: runtime not ready")
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(rec.client, "create", refuse)
    assert rec.reconcile(NS, JOB) == 1.0
    assert rec.reconcile(NS, JOB) == 2.0
    job = job_of(job_api, JOB)
    assert "workloadRef" not in (job.get("status") or {})
    assert not conditions_of(job).get("Failed")
    warning = ("Warning", "WorkloadCreationError", "admission webhook denied: runtime not ready")
    assert warning in events_of(job_api, JOB)
    rec.reconcile(NS, JOB)
    assert job_of(job_api, JOB)["status"]["workloadRef"]["name"] == WORKLOAD


def test_deleting_a_job_deletes_its_workload_and_waits_for_its_pods(job_api: JobAPI) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock)
    assert job_api.http.delete(job_api.certify("jobs", JOB)).status_code == 200
    assert rec.reconcile(NS, JOB) == 1.0  # pods still there: the finalizer holds
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is None
    assert job_api.read(job_api.certify("jobs", JOB)) is not None
    for pod in ("l-0", "w-0", "w-1"):
        job_api.http.delete(f"/api/v1/namespaces/{NS}/pods/{pod}")
    assert rec.reconcile(NS, JOB) is None
    assert job_api.read(job_api.certify("jobs", JOB)) is None


def test_a_deleted_job_goes_after_the_drain_grace_even_with_pods_left(job_api: JobAPI) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock)
    assert job_api.http.delete(job_api.certify("jobs", JOB)).status_code == 200
    deleted = job_of(job_api, JOB)["metadata"]["deletionTimestamp"]
    clock.at = datetime.fromisoformat(deleted.replace("Z", "+00:00")) + rec.drain_grace
    clock.advance(1)
    assert rec.reconcile(NS, JOB) is None
    assert job_api.read(job_api.certify("jobs", JOB)) is None


def complete(api: JobAPI, rec: Any) -> None:
    for pod in ("l-0", "w-0", "w-1"):
        set_pod(api, pod, phase="Succeeded", exit_code=0)
    set_train_job(api, WORKLOAD, "Complete")
    rec.reconcile(NS, JOB)


def finish_bandwidth(api: JobAPI, bus: str) -> None:
    api.put_status(
        api.certify("bandwidthmeasurements", f"{JOB}-bandwidth"),
        {
            "results": [{"sizeBytes": 8, "algBW": "1.0", "busBW": bus, "samples": 1}],
            "conditions": [{"type": "Complete", "status": "True", "reason": "JobSucceeded",
                            "message": "done", "lastTransitionTime": "2026-12-02T03:00:00Z"}],
        },
    )  # fmt: skip


BANDWIDTH = {"bandwidthMeasurement": {"logProfileRef": "nccl-bandwidth", "testType": "all_reduce"}}


def test_a_bandwidth_threshold_met_sets_validation_failed_false(job_api: JobAPI) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock, thresholds={"busBandwidthGBps": "value >= 300"}, **BANDWIDTH)
    complete(job_api, rec)
    assert rec.reconcile(NS, JOB) == 1.0  # no measurement yet: waiting
    finish_bandwidth(job_api, "350.5")
    rec.reconcile(NS, JOB)
    job = job_of(job_api, JOB)
    assert conditions_of(job)["ValidationFailed"] == ("False", "ThresholdsMet")
    assert conditions_of(job)["Succeeded"][0] == "True"


def test_a_bandwidth_threshold_missed_names_the_violation_and_blames_the_group(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock, thresholds={"busBandwidthGBps": "value >= 300"}, **BANDWIDTH)
    complete(job_api, rec)
    finish_bandwidth(job_api, "120.25")
    rec.reconcile(NS, JOB)
    job = job_of(job_api, JOB)
    message = 'Threshold "busBandwidthGBps" violated: measured 120.2500, expression: value >= 300'
    condition = next(c for c in job["status"]["conditions"] if c["type"] == "ValidationFailed")
    assert (condition["status"], condition["reason"], condition["message"]) == (
        "True",
        "ThresholdViolated",
        message,
    )
    assert [(f["name"], f["reason"]) for f in job["status"]["failedNodes"]] == [
        ("gpu-01", "ThresholdViolation"),
        ("gpu-02", "ThresholdViolation"),
    ]


def test_a_measurement_that_never_completes_times_the_thresholds_out(job_api: JobAPI) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock, thresholds={"busBandwidthGBps": "value >= 300"},
                      measurementTimeout="2m", **BANDWIDTH)  # fmt: skip
    complete(job_api, rec)
    clock.advance(121)
    rec.reconcile(NS, JOB)
    condition = next(
        c for c in job_of(job_api, JOB)["status"]["conditions"] if c["type"] == "ValidationFailed"
    )
    assert (condition["reason"], condition["message"]) == (
        "MeasurementTimeout",
        "Measurement data not available within 2m0s for keys: [busBandwidthGBps]",
    )


def test_a_foreign_or_dying_trainjob_of_the_name_is_never_adopted(job_api: JobAPI) -> None:
    clock = JobClock()
    add_node(job_api, "gpu-01")
    job_api.post(job_api.certify("jobs"), job_body(JOB, ["gpu-01"]))
    foreign = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": WORKLOAD, "finalizers": ["example.com/hold"]},
        "spec": {"runtimeRef": {"name": "nccl", "kind": "TrainingRuntime"}},
    }
    job_api.post(job_api.trainer("trainjobs"), foreign)
    rec = reconciler(job_api, clock)
    assert rec.reconcile(NS, JOB) == 60.0
    assert "workloadRef" not in (job_of(job_api, JOB).get("status") or {})
    message = f"TrainJob/{WORKLOAD} exists and belongs to another object"
    assert ("Warning", "WorkloadCreationError", message) in events_of(job_api, JOB)
    assert job_api.http.delete(job_api.trainer("trainjobs", WORKLOAD)).status_code == 200
    assert rec.reconcile(NS, JOB) == 1.0  # being deleted: wait for it to go
    assert "workloadRef" not in (job_of(job_api, JOB).get("status") or {})


def test_a_failed_jobs_workload_left_by_a_dying_pass_is_deleted_on_the_next(
    job_api: JobAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock, owner=True)
    clock.advance(11 * 60)
    with monkeypatch.context() as crash:
        crash.setattr(rec, "delete_workload", lambda job: None)  # dies after the terminal write
        rec.reconcile(NS, JOB)
    assert conditions_of(job_of(job_api, JOB))["Failed"] == ("True", "JobTimedOut")
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is not None
    assert rec.reconcile(NS, JOB) is None
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is None
