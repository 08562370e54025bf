"""A GoodputMeasurement with ``workerStrategy.type: Multi`` (§2.8, §6.2) through the controller
on the API stand-in: application start, checkpoints and the restart from the lifecycle pod
(the first), steps from the training-step pod (the last), sampled while both logs grow; the
figures equal one read of both whole logs merged in time."""

from __future__ import annotations

from typing import Any

from glimmer.api.certify.logprofile import LogProfile
from glimmer.certify.catalog.entries import builtin_log_profiles
from glimmer.certify.measure.goodput import parse_workers, training_profile
from glimmer.operator.certify.measurement_goodput import decimal, parser_profile
from glimmer.operator.certify.measurements import MeasurementReconciler
from tests.operator.certify.conftest import NS, JobAPI, JobClock
from tests.operator.certify.job_harness import set_pod, set_train_job
from tests.operator.certify.measurement_harness import JOB, WORKLOAD, measured_job

GM = f"{JOB}-goodput"
PROFILE = "megatron-multi"


def at(second: float) -> str:
    whole = int(second)
    frac = round((second - whole) * 1e6)
    return f"2026-12-02T03:{whole // 60:02d}:{whole % 60:02d}.{frac:06d}Z  [2026-12-02 03:{whole // 60:02d}:{whole % 60:02d}.{frac:06d}]"  # noqa: E501


def logs() -> tuple[list[str], list[str]]:
    """Rank 0's lifecycle lines and the last rank's steps: a save at step 4, a restart at
    25 s, training on from step 5."""
    life = [f"{at(0)} training ...\n"]
    steps = []
    for step in range(1, 9):
        steps.append(
            f"{at(step)} iteration {step:>8}/      50 | consumed samples: 1 | elapsed time per "
            f"iteration (ms): 1000.0 | throughput per GPU (TFLOP/s/GPU): {300 + step}.0 |\n"
        )
        if step == 4:
            life.append(f"{at(4.2)} saving checkpoint at iteration        4 to /ckpt\n")
            life.append(f"{at(5.5)}   successfully saved checkpoint from iteration 4 to /ckpt\n")
    life.append(f"{at(25)} training ...\n")
    for step in range(5, 10):
        steps.append(
            f"{at(25 + step)} iteration {step:>8}/      50 | consumed samples: 1 | elapsed time "
            f"per iteration (ms): 1000.0 | throughput per GPU (TFLOP/s/GPU): 350.0 |\n"
        )
    return life, steps


def multi_profile(api: JobAPI) -> LogProfile:
    body = builtin_log_profiles()["megatron-training"].model_dump(by_alias=True, exclude_none=True)
    body["metadata"] = {"name": PROFILE}
    body["spec"]["workerStrategy"] = {
        "type": "Multi", "lifecyclePod": "first", "trainingStepPod": "last",
        "replicatedJobName": "node",
    }  # fmt: skip
    api.post("/apis/certify.glimmer.ai/v1alpha1/logprofiles", body)
    return LogProfile.model_validate(body)


def gm(api: JobAPI) -> dict[str, Any]:
    found = api.read(api.certify("goodputmeasurements", GM))
    assert found is not None
    status: dict[str, Any] = found.get("status") or {}
    return status


def test_multi_worker_goodput_reads_lifecycle_and_steps_from_their_pods(job_api: JobAPI) -> None:
    clock = JobClock()
    profile = multi_profile(job_api)
    life, steps = logs()
    asked = {"goodputMeasurement": {"logProfileRef": PROFILE, "sampleInterval": "10s"}}
    jobs = measured_job(job_api, clock, asked, [("w-0", life[0], False), ("w-1", steps[0], False)])
    gms = MeasurementReconciler(job_api.client, clock.now, "goodputmeasurements")
    for n in range(1, max(len(life), len(steps)) + 1):  # both logs grow, a line a sample
        job_api.write_log("w-0", "".join(life[:n]))
        job_api.write_log("w-1", "".join(steps[:n]))
        assert gms.reconcile(NS, GM) == 10.0
    running = gm(job_api)
    assert {c["role"] for c in running["logCursors"]} == {"lifecycle", "steps"}
    # Steps alone name no checkpoint; the lifecycle pod's save did. Step 9 (03:00:34) waits:
    # the lifecycle pod has printed only to 03:00:25, and a line of it could still come first.
    assert (running["lastCheckpointStep"], running["currentStep"]) == (4, 8)
    # Read at 03:00:40, though: any line of the quiet lifecycle pod stamped before 03:00:35
    # would be in its log by now (LOG_SETTLE_SECONDS), so step 9 goes in — a quiet rank 0
    # holds the steps back seconds, not until its next checkpoint (the stall rule reads them).
    clock.advance(40)
    gms.reconcile(NS, GM)
    assert gm(job_api)["currentStep"] == 9
    for pod in ("w-0", "w-1"):
        set_pod(job_api, pod, phase="Succeeded", exit_code=0)
    set_train_job(job_api, WORKLOAD, "Complete")
    # the Job ends at 03:00:40, with the last step at 03:00:34
    jobs.reconcile(NS, JOB)
    assert gms.reconcile(NS, GM) is None
    done = gm(job_api)
    assert done["currentStep"] == 9  # both pods finished: nothing can come before it now
    whole = parse_workers("".join(life), "".join(steps), parser_profile(training_profile(profile)))
    assert whole is not None
    assert done["interruptionCount"] == whole.interruptions == 1
    assert done["checkpointSaveTimeSec"] == decimal(whole.checkpoint_save) == "1.300000"
    assert (done["lostWorkTimeSec"], done["rescheduleTimeSec"], done["resumeTimeSec"]) == (
        decimal(whole.lost_work),
        decimal(whole.reschedule),
        decimal(whole.resume),
    )
    assert done["avgTFLOPSPerGPU"] == decimal(whole.avg_tflops_per_gpu or 0.0)
    # ADR-072: the training time ends at the Job's terminal time, not the last step.
    assert done["trainingTimeSec"] == "40.000000"
    assert done["completionTime"] == "2026-12-02T03:00:40Z"
