"""The GoodputMeasurement controller and the Job's goodput paths (§6.2–6.3, §7.5–7.7; scenarios
37 and 38): figures from the training log, completion with the Job, frozen after Complete,
state recovered by a fresh controller, checkpoint restart, stall, goodput thresholds."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.certify.catalog.entries import builtin_log_profiles
from glimmer.certify.measure.goodput import parse_training, training_profile
from glimmer.operator.certify.measurement_goodput import parser_profile
from glimmer.operator.certify.measurements import MeasurementReconciler
from tests.operator.certify.conftest import NS, JobAPI, JobClock
from tests.operator.certify.job_harness import (
    add_pod,
    conditions_of,
    job_of,
    set_pod,
    set_train_job,
)
from tests.operator.certify.measurement_harness import JOB, WORKLOAD, measured_job

GM = f"{JOB}-goodput"
GOODPUT = {"goodputMeasurement": {"logProfileRef": "megatron-training", "sampleInterval": "10s"}}


def at(second: int) -> tuple[str, str]:
    minute, sec = divmod(second, 60)
    return f"2026-12-02T03:{minute:02d}:{sec:02d}Z", f"2026-12-02 03:{minute:02d}:{sec:02d}.000000"


def training_log(start: int, steps: range, *, save_at: int | None = None) -> str:
    """A Megatron log as the kubelet serves it with timestamps: the start, a step a second from
    ``start + 10``, and a checkpoint save of 2 s after step ``save_at``."""
    kube, inner = at(start)
    lines = [f"{kube}  [{inner}] training ..."]
    t = start + 10
    for step in steps:
        kube, inner = at(t)
        lines.append(
            f"{kube}  [{inner}] iteration {step:>8}/      50 | consumed samples: {step * 128} | "
            f"elapsed time per iteration (ms): 1000.0 | throughput per GPU (TFLOP/s/GPU): 400.0 |"
        )
        if step == save_at:
            kube, inner = at(t)
            lines.append(f"{kube}  [{inner}] saving checkpoint at iteration {step:>8} to /ckpt")
            t += 2
            kube, inner = at(t)
            lines.append(
                f"{kube}  [{inner}]   successfully saved checkpoint from iteration {step:>8} "
                "to /ckpt"
            )
        t += 1
    return "\n".join(lines) + "\n"


def started(api: JobAPI, clock: JobClock, log: str, **spec: Any) -> tuple[Any, Any]:
    jobs = measured_job(api, clock, GOODPUT, [("w-0", log, False)], **spec)
    return jobs, MeasurementReconciler(api.client, clock.now, "goodputmeasurements")


def gm(api: JobAPI) -> dict[str, Any]:
    found = api.read(api.certify("goodputmeasurements", GM))
    assert found is not None
    return found


def test_a_job_asking_for_goodput_gets_its_measurement(job_api: JobAPI) -> None:
    clock = JobClock()
    started(job_api, clock, training_log(0, range(1, 4)))
    spec = gm(job_api)["spec"]
    assert spec["jobRef"]["name"] == JOB
    assert (spec["logProfileRef"], spec["sampleInterval"]) == ("megatron-training", "10s")


def test_running_goodput_figures_come_from_the_training_log(job_api: JobAPI) -> None:
    clock = JobClock()
    _, gms = started(job_api, clock, training_log(0, range(1, 6), save_at=3))
    assert gms.reconcile(NS, GM) == 10.0
    status = gm(job_api)["status"]
    assert conditions_of({"status": status})["Measuring"] == ("True", "JobRunning")
    assert (status["currentStep"], status["highestStep"], status["lastCheckpointStep"]) == (5, 5, 3)
    assert status["applicationStartTime"] == "2026-12-02T03:00:00Z"
    assert status["lastStepTimestamp"] == "2026-12-02T03:00:16Z"
    assert status["checkpointSaveTimeSec"] == "2.000000"
    assert status["avgStepTimeSec"] == "1.000000"  # warmup steps 1-2 left out
    assert status["trainingTimeSec"] == "16.000000"
    assert status["result"] == "0.875000"  # (16 - 2) / 16


def test_goodput_completes_with_the_job_and_is_frozen_after(job_api: JobAPI) -> None:
    clock = JobClock()
    jobs, gms = started(job_api, clock, training_log(0, range(1, 6)))
    gms.reconcile(NS, GM)
    set_pod(job_api, "w-0", phase="Succeeded", exit_code=0)
    set_train_job(job_api, WORKLOAD, "Complete")
    clock.advance(20)  # the Job ends at 03:00:20, six seconds after the log's last line
    jobs.reconcile(NS, JOB)
    assert gms.reconcile(NS, GM) is None
    done = job_api.http.get(job_api.certify("goodputmeasurements", GM)).json()["status"]
    assert conditions_of({"status": done})["Complete"] == ("True", "JobSucceeded")
    assert done["result"] == "1.000000"
    assert done["applicationStopTime"] == "2026-12-02T03:00:14Z"
    # ADR-072: training time runs from the training start to the Job's terminal time.
    ended = next(
        c for c in job_of(job_api, JOB)["status"]["conditions"] if c["type"] == "Succeeded"
    )
    assert ended["lastTransitionTime"] == done["completionTime"] == "2026-12-02T03:00:20Z"
    assert done["trainingTimeSec"] == "20.000000"
    job_api.write_log("w-0", training_log(0, range(1, 30)))
    clock.advance(3600)
    assert (
        MeasurementReconciler(job_api.client, clock.now, "goodputmeasurements").reconcile(NS, GM)
        is None
    )
    assert job_api.http.get(job_api.certify("goodputmeasurements", GM)).json()["status"] == done


def test_a_failed_job_completes_its_goodput_as_job_failed(job_api: JobAPI) -> None:
    clock = JobClock()
    jobs, gms = started(job_api, clock, training_log(0, range(1, 4)))
    set_pod(job_api, "w-0", phase="Failed", exit_code=1)
    set_train_job(job_api, WORKLOAD, "Failed", "rank 0 died")
    jobs.reconcile(NS, JOB)
    gms.reconcile(NS, GM)
    assert conditions_of(gm(job_api))["Complete"] == ("True", "JobFailed")


def test_a_restarted_controller_recovers_the_same_state_from_the_log(job_api: JobAPI) -> None:
    clock = JobClock()
    _, gms = started(job_api, clock, training_log(0, range(1, 6), save_at=2))
    gms.reconcile(NS, GM)
    before = gm(job_api)
    fresh = MeasurementReconciler(job_api.client, clock.now, "goodputmeasurements")
    fresh.reconcile(NS, GM)
    after = gm(job_api)
    assert after["status"] == before["status"]
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_checkpoint_restart_recreates_the_workload_and_goodput_counts_the_interruption(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    jobs, gms = started(
        job_api, clock, training_log(0, range(1, 5), save_at=2),
        checkpoint={"pvcName": "ckpt", "maxRestarts": 1},
    )  # fmt: skip
    gms.reconcile(NS, GM)
    set_pod(job_api, "w-0", phase="Failed", exit_code=1)
    set_train_job(job_api, WORKLOAD, "Failed", "node lost")
    wait = jobs.reconcile(NS, JOB)
    job = job_of(job_api, JOB)
    assert conditions_of(job)["InProgress"] == ("True", "WorkloadRestarting")
    assert job["status"]["restartCount"] == 1
    assert "workloadRef" not in job["status"] and "workloadStartTime" not in job["status"]
    assert wait == 20.0  # two sample intervals: the measurement reads the old pod's last lines
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is None
    assert jobs.reconcile(NS, JOB) is not None  # still within the grace: nothing recreated
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is None
    clock.advance(21)
    jobs.reconcile(NS, JOB)
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is not None
    job_api.http.delete(f"/api/v1/namespaces/{NS}/pods/w-0")
    add_pod(job_api, "w-0b", "gpu-01", WORKLOAD, job=JOB, log=training_log(40, range(2, 6)))
    jobs.reconcile(NS, JOB)
    gms.reconcile(NS, GM)
    status = gm(job_api)["status"]
    assert status["interruptionCount"] == 1
    assert float(status["lostWorkTimeSec"]) > 0 and float(status["rescheduleTimeSec"]) > 0
    # The old attempt's lines were folded in when read; the new pod is read from its start,
    # and no copy of the old log is kept anywhere.
    new_uid = job_api.read(f"/api/v1/namespaces/{NS}/pods/w-0b")["metadata"]["uid"]  # type: ignore[index]
    assert [(c["role"], c["podUID"]) for c in status["logCursors"]] == [("log", new_uid)]
    assert job_api.read(f"/api/v1/namespaces/{NS}/configmaps/{GM}-logs") is None
    whole = parse_training(
        training_log(0, range(1, 5), save_at=2) + training_log(40, range(2, 6)),
        parser_profile(training_profile(builtin_log_profiles()["megatron-training"])),
    )
    assert whole is not None
    assert (status["lostWorkTimeSec"], status["rescheduleTimeSec"], status["resumeTimeSec"]) == (
        f"{whole.lost_work:.6f}",
        f"{whole.reschedule:.6f}",
        f"{whole.resume:.6f}",
    )


def test_a_failed_workload_without_a_checkpoint_written_is_not_restarted(job_api: JobAPI) -> None:
    clock = JobClock()
    jobs, gms = started(job_api, clock, training_log(0, range(1, 3)),
                        checkpoint={"pvcName": "ckpt", "maxRestarts": 3})  # fmt: skip
    gms.reconcile(NS, GM)
    set_train_job(job_api, WORKLOAD, "Failed", "node lost")
    jobs.reconcile(NS, JOB)
    assert conditions_of(job_of(job_api, JOB))["Failed"] == ("True", "WorkloadFailed")


def test_no_step_within_the_stall_threshold_fails_the_job_as_stalled(job_api: JobAPI) -> None:
    clock = JobClock()  # the workload starts at 03:00:00; the log's last step is at 03:00:14
    jobs, gms = started(job_api, clock, training_log(0, range(1, 6)), stallMultiplier=2)
    gms.reconcile(NS, GM)
    # threshold = 2 x 1 s x 1 + 2 x 10 s = 22 s after the last step
    clock.advance(30)
    jobs.reconcile(NS, JOB)
    assert conditions_of(job_of(job_api, JOB))["InProgress"] == ("True", "WorkloadRunning")
    clock.advance(10)
    jobs.reconcile(NS, JOB)
    job = job_of(job_api, JOB)
    assert conditions_of(job)["Failed"] == ("True", "WorkloadStalled")
    failed = next(c for c in job["status"]["conditions"] if c["type"] == "Failed")
    assert failed["message"] == "Workload stalled: no training step within the configured threshold"


def finished_with_threshold(api: JobAPI, clock: JobClock, expression: str) -> dict[str, Any]:
    jobs, gms = started(api, clock, training_log(0, range(1, 6), save_at=3),
                        thresholds={"goodputRatio": expression})  # fmt: skip
    set_pod(api, "w-0", phase="Succeeded", exit_code=0)
    set_train_job(api, WORKLOAD, "Complete")
    clock.advance(16)  # the Job ends with its log's last line, at 03:00:16
    jobs.reconcile(NS, JOB)
    assert jobs.reconcile(NS, JOB) == 1.0  # the measurement is not Complete yet
    gms.reconcile(NS, GM)
    jobs.reconcile(NS, JOB)
    return next(
        c for c in job_of(api, JOB)["status"]["conditions"] if c["type"] == "ValidationFailed"
    )


def test_a_goodput_threshold_met_passes(job_api: JobAPI) -> None:
    c = finished_with_threshold(job_api, JobClock(), "value >= 0.8")
    assert (c["status"], c["reason"]) == ("False", "ThresholdsMet")


def test_a_goodput_threshold_missed_pins_the_violation_message(job_api: JobAPI) -> None:
    c = finished_with_threshold(job_api, JobClock(), "value >= 0.95")
    assert (c["status"], c["reason"], c["message"]) == (
        "True",
        "ThresholdViolated",
        'Threshold "goodputRatio" violated: measured 0.8750, expression: value >= 0.95',
    )


def test_a_stalled_workload_with_a_checkpoint_is_restarted_not_failed(job_api: JobAPI) -> None:
    clock = JobClock()
    jobs, gms = started(
        job_api, clock, training_log(0, range(1, 6), save_at=3), stallMultiplier=2,
        checkpoint={"pvcName": "ckpt", "maxRestarts": 2},
    )  # fmt: skip
    gms.reconcile(NS, GM)
    clock.advance(60)
    jobs.reconcile(NS, JOB)
    job = job_of(job_api, JOB)
    restarting = next(c for c in job["status"]["conditions"] if c["type"] == "InProgress")
    assert (restarting["reason"], restarting["message"]) == (
        "WorkloadRestarting",
        "Restarting workload from checkpoint (restart 1/2)",
    )
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is None


def test_goodput_completed_after_the_pods_are_gone_counts_no_interruption(
    job_api: JobAPI,
) -> None:
    clock = JobClock()
    jobs, gms = started(job_api, clock, training_log(0, range(1, 6)))
    gms.reconcile(NS, GM)
    set_pod(job_api, "w-0", phase="Failed", exit_code=1)
    set_train_job(job_api, WORKLOAD, "Failed", "rank 0 died")
    jobs.reconcile(NS, JOB)
    job_api.http.delete(f"/api/v1/namespaces/{NS}/pods/w-0")  # collected with its TrainJob
    gms.reconcile(NS, GM)
    status = gm(job_api)["status"]
    assert conditions_of({"status": status})["Complete"] == ("True", "JobFailed")
    assert (status["interruptionCount"], status["highestStep"]) == (0, 5)


def test_a_restart_crashed_before_its_delete_never_resumes_into_the_failed_workload(
    job_api: JobAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = JobClock()
    jobs, gms = started(
        job_api, clock, training_log(0, range(1, 5), save_at=2),
        checkpoint={"pvcName": "ckpt", "maxRestarts": 1},
    )  # fmt: skip
    gms.reconcile(NS, GM)
    failed_uid = job_api.read(job_api.trainer("trainjobs", WORKLOAD))["metadata"]["uid"]  # type: ignore[index]
    set_train_job(job_api, WORKLOAD, "Failed", "node lost")
    with monkeypatch.context() as crash:
        crash.setattr(jobs, "delete_workload", lambda job: None)  # the pass dies before it
        jobs.reconcile(NS, JOB)
    assert job_api.read(job_api.trainer("trainjobs", WORKLOAD)) is not None
    clock.advance(21)
    assert jobs.reconcile(NS, JOB) == 1.0  # the failed attempt's TrainJob deleted first
    jobs.reconcile(NS, JOB)
    fresh = job_api.read(job_api.trainer("trainjobs", WORKLOAD))
    assert fresh is not None and fresh["metadata"]["uid"] != failed_uid
    job = job_of(job_api, JOB)
    assert job["status"]["restartCount"] == 1
    assert conditions_of(job)["InProgress"] == ("True", "WorkloadCreated")
