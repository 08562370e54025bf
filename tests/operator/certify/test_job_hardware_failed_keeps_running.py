"""§3.3/§7.1 on the API stand-in: a node the health check finds unhealthy sets HardwareFailed
and the failed nodes and freezes the outcome, and the Job keeps running; the Workflow deletes
the workload, and the Job reads that deletion as the hardware failure it already reported —
Failed, HardwareFailureDetected — never a second failure, never a checkpoint restart."""

from __future__ import annotations

from tests.operator.certify.conftest import NS, JobAPI, JobClock
from tests.operator.certify.job_harness import (
    GPU_UNHEALTHY,
    conditions_of,
    events_of,
    job_of,
    set_node_condition,
)
from tests.operator.certify.test_job_controller_guards import JOB, WORKLOAD, running_job
from tests.operator.certify.test_measurement_goodput import GM, gm, started, training_log

MONITOR = {"nodeHealthMonitor": {"cel": {"expression": GPU_UNHEALTHY}}}
MESSAGE = "Hardware failure detected on node(s): [gpu-02]"


def test_an_unhealthy_node_marks_the_job_hardware_failed_and_the_job_keeps_running(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock, **MONITOR)
    set_node_condition(job_api, "gpu-02", "GPUHealthy", "False")
    rec.reconcile(NS, JOB)
    job = job_of(job_api, JOB)
    conditions = conditions_of(job)
    assert conditions["HardwareFailed"] == ("True", "HardwareFailureDetected")
    assert conditions["InProgress"] == ("True", "WorkloadRunning")
    assert "Failed" not in conditions or conditions["Failed"][0] == "False"
    assert job["status"]["failedNodes"] == [
        {
            "name": "gpu-02",
            "reason": "HardwareFailureDetected",
            "message": "Hardware failure detected by node health check",
        }
    ]
    outcome = job["status"]["outcome"]
    assert outcome["crashedOn"] == ["gpu-02"] and outcome["error"] == MESSAGE
    assert ("Warning", "HardwareFailureDetected", MESSAGE) in events_of(job_api, JOB)
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is not None  # still running
    rec.reconcile(NS, JOB)  # nothing new: the same verdict, not written or told again
    assert job_of(job_api, JOB)["metadata"]["resourceVersion"] == job["metadata"]["resourceVersion"]

    # The Workflow deletes the workload (workflow_drain): the Job ends as that hardware failure.
    assert job_api.http.delete(job_api.trainer("trainjobs", WORKLOAD)).status_code == 200
    rec.reconcile(NS, JOB)
    ended = job_of(job_api, JOB)
    conditions = conditions_of(ended)
    assert conditions["Failed"] == ("True", "HardwareFailureDetected")
    assert conditions["HardwareFailed"] == ("True", "HardwareFailureDetected")
    assert conditions["InProgress"][0] == "False"
    failed = next(c for c in ended["status"]["conditions"] if c["type"] == "Failed")
    assert failed["message"] == MESSAGE  # not "Workload TrainJob/... was deleted"
    assert ended["status"]["outcome"] == outcome
    assert ended["status"]["failedNodes"] == job["status"]["failedNodes"]
    assert not any(r == "WorkloadDeleted" for _, r, _ in events_of(job_api, JOB))


def test_a_hardware_failed_jobs_deleted_workload_is_not_restarted_from_its_checkpoint(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    jobs, gms = started(
        job_api, clock, training_log(0, range(1, 5), save_at=2),
        checkpoint={"pvcName": "ckpt", "maxRestarts": 3}, **MONITOR,
    )  # fmt: skip
    gms.reconcile(NS, GM)
    assert int(gm(job_api)["status"]["lastCheckpointStep"]) == 2  # a restart would be allowed
    set_node_condition(job_api, "gpu-01", "GPUHealthy", "False")
    jobs.reconcile(NS, JOB)
    assert conditions_of(job_of(job_api, JOB))["HardwareFailed"][0] == "True"
    assert job_api.http.delete(job_api.trainer("trainjobs", WORKLOAD)).status_code == 200
    jobs.reconcile(NS, JOB)
    clock.advance(3600)
    jobs.reconcile(NS, JOB)
    job = job_of(job_api, JOB)
    assert conditions_of(job)["Failed"] == ("True", "HardwareFailureDetected")
    assert "restartCount" not in job["status"]
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is None  # never recreated
