"""The BandwidthMeasurement controller (§6.1, §2.7; scenarios 36 and 37's frozen case): running
averages per size from the launcher's log, completion with the Job, frozen after Complete."""

from __future__ import annotations

from typing import Any

from glimmer.operator.certify.measurements import MeasurementReconciler
from tests.operator.certify.conftest import NS, JobAPI, JobClock
from tests.operator.certify.job_harness import (
    add_node,
    add_pod,
    conditions_of,
    job_body,
    job_of,
    reconciler,
    set_pod,
    set_train_job,
)
from tests.operator.certify.measurement_harness import JOB, WORKLOAD, measured_job

BM = f"{JOB}-bandwidth"
TS = "2026-12-02T03:01:00.123456789Z "
HEADER = (
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 16G step: 2(factor) warmup iters: 5 iters: 20\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
)


def row(size: int, alg: float, bus: float) -> str:
    return f"{size:>12}  {size // 4:>12}     float     sum      -1    25.10  {alg:6.2f}  {bus:6.2f}      0    24.90  {alg:6.2f}  {bus:6.2f}      0\n"  # noqa: E501


CYCLE_1 = HEADER + row(1048576, 100.0, 180.0) + row(2097152, 150.0, 270.0)
CYCLE_2 = row(1048576, 110.0, 200.0) + row(2097152, 160.0, 290.0)
NOISE = "gpu-01:12:12 [0] NCCL INFO Channel 00/02 : 0 1\n"


def started(api: JobAPI, clock: JobClock, log: str) -> tuple[Any, MeasurementReconciler]:
    spec = {"bandwidthMeasurement": {"logProfileRef": "nccl-bandwidth", "testType": "all_reduce"}}
    jobs = measured_job(api, clock, spec, [("l-0", log, True), ("w-0", "", False)])
    return jobs, MeasurementReconciler(api.client, clock.now, "bandwidthmeasurements")


def measurement(api: JobAPI) -> dict[str, Any]:
    found = api.read(api.certify("bandwidthmeasurements", BM))
    assert found is not None
    return found


def test_the_job_creates_its_bandwidth_measurement_pointing_at_it(job_api: JobAPI) -> None:
    clock = JobClock()
    started(job_api, clock, CYCLE_1)
    bm = measurement(job_api)
    assert bm["spec"] == {
        "jobRef": {"apiGroup": "certify.glimmer.ai", "kind": "Job", "name": JOB},
        "logProfileRef": "nccl-bandwidth",
        "sampleInterval": "60s",
        "testType": "all_reduce",
    }
    assert bm["metadata"]["labels"]["certify.glimmer.ai/job"] == JOB


def test_running_averages_per_size_come_from_every_row_of_the_launcher_log(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    log = "".join(TS + line for line in (NOISE + CYCLE_1).splitlines(True))
    _, bms = started(job_api, clock, log)
    assert bms.reconcile(NS, BM) == 60.0
    first = measurement(job_api)["status"]
    assert first["results"] == [
        {"sizeBytes": 1048576, "algBW": "100.000000", "busBW": "180.000000", "samples": 1},
        {"sizeBytes": 2097152, "algBW": "150.000000", "busBW": "270.000000", "samples": 1},
    ]
    assert conditions_of({"status": first})["Measuring"] == ("True", "JobRunning")
    later = "2026-12-02T03:02:00.5Z "  # the next cycle, appended a minute on
    job_api.write_log("l-0", log + "".join(later + line for line in CYCLE_2.splitlines(True)))
    clock.advance(60)
    bms.reconcile(NS, BM)
    status = measurement(job_api)["status"]
    assert status["results"] == [
        {"sizeBytes": 1048576, "algBW": "105.000000", "busBW": "190.000000", "samples": 2},
        {"sizeBytes": 2097152, "algBW": "155.000000", "busBW": "280.000000", "samples": 2},
    ]
    assert status["startTime"] == first["startTime"]


def test_the_job_succeeding_completes_the_measurement_at_its_terminal_time(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    jobs, bms = started(job_api, clock, CYCLE_1)
    bms.reconcile(NS, BM)
    for pod in ("l-0", "w-0"):
        set_pod(job_api, pod, phase="Succeeded", exit_code=0)
    set_train_job(job_api, WORKLOAD, "Complete")
    clock.advance(90)
    jobs.reconcile(NS, JOB)
    assert bms.reconcile(NS, BM) is None
    status = measurement(job_api)["status"]
    assert conditions_of({"status": status})["Complete"] == ("True", "JobSucceeded")
    assert conditions_of({"status": status})["Measuring"] == ("False", "JobSucceeded")
    succeeded = next(
        c for c in job_of(job_api, JOB)["status"]["conditions"] if c["type"] == "Succeeded"
    )
    assert status["completionTime"] == succeeded["lastTransitionTime"]
    assert len(status["results"]) == 2


def test_a_job_that_succeeded_without_a_table_says_no_data_was_collected(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    jobs, bms = started(job_api, clock, "nothing measured here\n")
    set_train_job(job_api, WORKLOAD, "Complete")
    jobs.reconcile(NS, JOB)
    bms.reconcile(NS, BM)
    c = next(c for c in measurement(job_api)["status"]["conditions"] if c["type"] == "Complete")
    assert (c["reason"], c["message"]) == (
        "NoDataCollected",
        "Job succeeded but no bandwidth data was parsed; check spec.logProfileRef",
    )


def test_a_complete_measurement_stays_byte_identical_whatever_happens_after(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    jobs, bms = started(job_api, clock, CYCLE_1)
    set_train_job(job_api, WORKLOAD, "Complete")
    jobs.reconcile(NS, JOB)
    bms.reconcile(NS, BM)
    frozen = job_api.http.get(job_api.certify("bandwidthmeasurements", BM)).json()["status"]
    job_api.write_log("l-0", CYCLE_1 + CYCLE_2 + CYCLE_2)
    touched = job_of(job_api, JOB)
    touched["metadata"].setdefault("annotations", {})["touched"] = "yes"
    assert job_api.http.put(job_api.certify("jobs", JOB), json=touched).status_code == 200
    clock.advance(3600)
    assert bms.reconcile(NS, BM) is None
    again = MeasurementReconciler(job_api.client, clock.now, "bandwidthmeasurements")
    assert again.reconcile(NS, BM) is None
    assert job_api.http.get(job_api.certify("bandwidthmeasurements", BM)).json()["status"] == frozen


def test_an_unknown_log_profile_is_reported_and_not_terminal(job_api: JobAPI) -> None:
    clock = JobClock()
    add_node(job_api, "gpu-01")
    spec = {"bandwidthMeasurement": {"logProfileRef": "no-such-profile"}}
    job_api.post(job_api.certify("jobs"), job_body(JOB, ["gpu-01"], **spec))
    reconciler(job_api, clock).reconcile(NS, JOB)
    bms = MeasurementReconciler(job_api.client, clock.now, "bandwidthmeasurements")
    assert bms.reconcile(NS, BM) == 30.0
    conditions = conditions_of(measurement(job_api))
    assert conditions["Measuring"] == ("False", "LogProfileNotFound")
    assert "Complete" not in conditions


def test_a_log_profile_on_the_cluster_is_the_recipe_read(job_api: JobAPI) -> None:
    profile = {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "LogProfile",
        "metadata": {"name": "house-format"},
        "spec": {
            "timestamp": {"layout": "2006-01-02T15:04:05Z"},
            "patterns": {
                "bandwidthResult": {
                    "regex": r"size=(?P<size>\d+) alg=(?P<algBW>[\d.]+) bus=(?P<busBW>[\d.]+)",
                    "example": "size=8 alg=1.5 bus=2.5",
                }
            },
            "workerStrategy": {"type": "Single", "replicatedJobName": "launcher"},
        },
    }
    job_api.post("/apis/certify.glimmer.ai/v1alpha1/logprofiles", profile)
    clock = JobClock()
    add_node(job_api, "gpu-01")
    spec = {"bandwidthMeasurement": {"logProfileRef": "house-format"}}
    job_api.post(job_api.certify("jobs"), job_body(JOB, ["gpu-01"], **spec))
    reconciler(job_api, clock).reconcile(NS, JOB)
    add_pod(job_api, "l-0", "gpu-01", WORKLOAD, launcher=True, log="size=8 alg=1.5 bus=2.5\n")
    MeasurementReconciler(job_api.client, clock.now, "bandwidthmeasurements").reconcile(NS, BM)
    assert measurement(job_api)["status"]["results"] == [
        {"sizeBytes": 8, "algBW": "1.500000", "busBW": "2.500000", "samples": 1}
    ]
