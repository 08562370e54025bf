"""The Job controller's reconcile (§3.3) from creation to its end: the TrainJob it creates,
the condition trio and its Events, the clocks, and the frozen outcome."""

from __future__ import annotations

from typing import Any

from tests.operator.certify.conftest import JobAPI, JobClock
from tests.operator.certify.job_harness import (
    add_node,
    add_pod,
    conditions_of,
    events_of,
    job_body,
    job_of,
    reconciler,
    set_pod,
    set_train_job,
)

NCCL_LOG = (
    "# nccl-tests\n  8  2  float  sum  -1  10.5  0.00  0.00  0\n# Avg bus bandwidth    : 0.0\n"
)


def started(api: JobAPI, clock: JobClock, name: str = "wf-group-0-iter-1", **spec: Any) -> Any:
    for node in ("gpu-01", "gpu-02"):
        add_node(api, node)
    api.post(api.certify("jobs"), job_body(name, ["gpu-01", "gpu-02"], **spec))
    rec = reconciler(api, clock)
    rec.reconcile("default", name)
    return rec


def test_a_new_job_gets_its_trainjob_labelled_and_owned_and_is_in_progress(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    started(job_api, clock, workloadMetadata={"labels": {"team": "infra"}})
    job = job_of(job_api, "wf-group-0-iter-1")
    tj = job_api.read(job_api.trainer("trainjobs", "wf-group-0-iter-1-workload"))
    assert tj is not None
    assert tj["metadata"]["labels"] == {
        "team": "infra",
        "app.kubernetes.io/managed-by": "glimmer",
        "certify.glimmer.ai/job": "wf-group-0-iter-1",
        "certify.glimmer.ai/group": "group-0",  # the core's job name, from the Job's labels
    }
    assert tj["metadata"]["ownerReferences"][0]["uid"] == job["metadata"]["uid"]
    patch = tj["spec"]["runtimePatches"][-1]
    worker = patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    assert worker["name"] == "node"
    labels = worker["template"]["spec"]["template"]["metadata"]["labels"]
    assert labels == {"certify.glimmer.ai/job": "wf-group-0-iter-1"}
    assert "certify.glimmer.ai/finalizer" in job["metadata"]["finalizers"]
    assert job["status"]["workloadRef"]["name"] == "wf-group-0-iter-1-workload"
    assert conditions_of(job)["InProgress"] == ("True", "WorkloadCreated")
    assert ("Normal", "WorkloadCreated",
            "Workload TrainJob/wf-group-0-iter-1-workload created and is starting") in events_of(
        job_api, "wf-group-0-iter-1")  # fmt: skip


def test_running_stamps_the_workload_start_once_and_completion_freezes_the_outcome(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    rec = started(job_api, clock)
    workload = "wf-group-0-iter-1-workload"
    rec.reconcile("default", "wf-group-0-iter-1")
    assert conditions_of(job_of(job_api, "wf-group-0-iter-1"))["InProgress"][1] == (
        "WorkloadPending"
    )
    add_pod(job_api, "l-0", "gpu-01", workload, launcher=True, log=NCCL_LOG)
    add_pod(job_api, "w-0", "gpu-01", workload, job="wf-group-0-iter-1")
    add_pod(job_api, "w-1", "gpu-02", workload, job="wf-group-0-iter-1")
    rec.reconcile("default", "wf-group-0-iter-1")
    first = job_of(job_api, "wf-group-0-iter-1")
    assert conditions_of(first)["InProgress"] == ("True", "WorkloadRunning")
    assert first["status"]["workloadStartTime"] == "2026-12-02T03:00:00Z"
    clock.advance(30)
    rec.reconcile("default", "wf-group-0-iter-1")
    assert job_of(job_api, "wf-group-0-iter-1")["status"]["workloadStartTime"] == (
        "2026-12-02T03:00:00Z"
    )
    for pod in ("l-0", "w-0", "w-1"):
        set_pod(job_api, pod, phase="Succeeded", exit_code=0)
    set_train_job(job_api, workload, "Complete")
    rec.reconcile("default", "wf-group-0-iter-1")
    done = job_of(job_api, "wf-group-0-iter-1")
    assert conditions_of(done)["Succeeded"] == ("True", "WorkloadCompleted")
    assert conditions_of(done)["InProgress"][0] == "False"
    outcome = done["status"]["outcome"]
    assert outcome == {
        "text": NCCL_LOG,
        "exitCode": 0,
        "error": "",
        "path": "network",
        "crashedOn": [],
        "elapsedSeconds": 150.0,
    }
    # Frozen: later passes change nothing, whatever the pods do.
    job_api.write_log("l-0", "something else\n")
    clock.advance(600)
    rec.reconcile("default", "wf-group-0-iter-1")
    assert job_of(job_api, "wf-group-0-iter-1")["status"] == done["status"]


def test_a_failed_workload_captures_the_oom_killed_log_and_blames_the_group(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    rec = started(job_api, clock)
    workload = "wf-group-0-iter-1-workload"
    add_pod(job_api, "l-0", "gpu-01", workload, launcher=True, phase="Failed", exit_code=1,
            log="start\nrank 1 died\n")  # fmt: skip
    add_pod(job_api, "w-0", "gpu-01", workload, job="wf-group-0-iter-1", phase="Failed",
            exit_code=1, log="echo of rank 1\n")  # fmt: skip
    add_pod(job_api, "w-1", "gpu-02", workload, job="wf-group-0-iter-1", phase="Failed",
            exit_code=137, reason="OOMKilled", log="allocating\nkilled\n")  # fmt: skip
    set_train_job(job_api, workload, "Failed", "jobset failed")
    rec.reconcile("default", "wf-group-0-iter-1")
    job = job_of(job_api, "wf-group-0-iter-1")
    assert conditions_of(job)["Failed"] == ("True", "WorkloadFailed")
    assert job["status"]["failureLog"] == {
        "podName": "w-1",
        "nodeName": "gpu-02",
        "exitCode": 137,
        "reason": "OOMKilled",
        "tail": "allocating\nkilled\n",
    }
    assert job["status"]["failedNodes"] == [
        {"name": "gpu-01", "reason": "WorkloadFailed", "message": "jobset failed"},
        {"name": "gpu-02", "reason": "WorkloadFailed", "message": "jobset failed"},
    ]
    outcome = job["status"]["outcome"]
    assert (outcome["exitCode"], outcome["error"], outcome["crashedOn"]) == (
        1,
        "killed",
        ["gpu-02"],
    )
    assert outcome["text"] == "start\nrank 1 died\n"
    assert ("Warning", "WorkloadFailed", "jobset failed") in events_of(job_api, "wf-group-0-iter-1")
    assert job_api.read(job_api.trainer("trainjobs", workload)) is None


def test_a_failed_job_without_pods_says_pod_not_found(job_api: JobAPI) -> None:
    clock = JobClock()
    rec = started(job_api, clock)
    set_train_job(job_api, "wf-group-0-iter-1-workload", "Failed", "never scheduled")
    rec.reconcile("default", "wf-group-0-iter-1")
    log = job_of(job_api, "wf-group-0-iter-1")["status"]["failureLog"]
    assert log["reason"] == "PodNotFound"


def test_a_workload_deleted_behind_the_job_fails_it(job_api: JobAPI) -> None:
    clock = JobClock()
    rec = started(job_api, clock)
    gone = job_api.http.delete(job_api.trainer("trainjobs", "wf-group-0-iter-1-workload"))
    assert gone.status_code == 200, gone.text
    rec.reconcile("default", "wf-group-0-iter-1")
    job = job_of(job_api, "wf-group-0-iter-1")
    assert conditions_of(job)["Failed"] == ("True", "WorkloadDeleted")
    assert job["status"]["outcome"]["error"] == (
        "Workload TrainJob/wf-group-0-iter-1-workload was deleted"
    )


def test_a_workload_label_naming_the_controllers_own_key_fails_the_job(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    started(job_api, clock, workloadMetadata={"labels": {"app.kubernetes.io/managed-by": "me"}})
    job = job_of(job_api, "wf-group-0-iter-1")
    assert conditions_of(job)["Failed"] == ("True", "InvalidJob")
    assert "app.kubernetes.io/managed-by" in job["status"]["outcome"]["error"]
