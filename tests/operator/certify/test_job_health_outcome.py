"""§7.1: a Job the node-health check ended says so in its frozen outcome — the log ends with the
verdict line the Job's message gives — so the replayed core reads the hardware failure, not
whatever the workload had printed when the check fired ("" or "testsRun=1")."""

from __future__ import annotations

from glimmer.certify.category.diagnostics import diag_reason
from tests.operator.certify.conftest import NS, JobAPI, JobClock
from tests.operator.certify.job_harness import GPU_UNHEALTHY, job_of, set_node_condition
from tests.operator.certify.test_job_controller_guards import JOB, running_job

MESSAGE = "Hardware failure detected on node(s): [gpu-02]"


def test_a_health_failed_jobs_outcome_ends_with_the_hardware_failure(job_api: JobAPI) -> None:
    clock = JobClock()
    rec = running_job(job_api, clock, nodeHealthMonitor={"cel": {"expression": GPU_UNHEALTHY}})
    set_node_condition(job_api, "gpu-02", "GPUHealthy", "False")
    rec.reconcile(NS, JOB)
    outcome = job_of(job_api, JOB)["status"]["outcome"]
    assert outcome["exitCode"] == 1
    assert outcome["error"] == MESSAGE
    assert outcome["text"].startswith("step 1\nstep 2\n")  # rank 0's log as it was, kept
    assert outcome["text"].splitlines()[-1] == f"FAIL: {MESSAGE}"
    assert diag_reason(outcome["text"]) == MESSAGE  # what the DCGM category reads
