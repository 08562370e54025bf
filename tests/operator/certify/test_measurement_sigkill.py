"""A goodput measurement's controller SIGKILLed at random instants while the training log
grows, and started again each time (ADR-005, §6): the figures, the cursor and the reader's
state are one status write, so whatever instant a kill lands on — before a read, between the
read and the write, after it — the measurement completes with exactly the status of one read
of the whole log."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glimmer.operator.certify.measurement_reads import LOG, read_pod
from glimmer.operator.certify.measurements import MeasurementReconciler
from tests.operator.certify.conftest import NS, JobAPI, JobClock
from tests.operator.certify.job_harness import set_pod, set_train_job
from tests.operator.certify.measurement_harness import JOB, WORKLOAD, measured_job

REPO = Path(__file__).resolve().parents[3]
GM = f"{JOB}-goodput"
KILLS = 6
FIGURES = (
    "result", "highestStep", "trainingTimeSec", "lostWorkTimeSec", "rescheduleTimeSec",
    "resumeTimeSec", "checkpointSaveTimeSec", "interruptionCount", "avgStepTimeSec",
    "avgTFLOPSPerGPU", "currentStep", "lastCheckpointStep", "readerState",
)  # fmt: skip


def line(t_ms: int, text: str) -> str:
    sec, ms = divmod(t_ms, 1000)
    minute, sec = divmod(sec, 60)
    kube = f"2026-12-02T03:{minute:02d}:{sec:02d}.{ms:03d}000123Z"
    return f"{kube}  [2026-12-02 03:{minute:02d}:{sec:02d}.{ms:03d}000] {text}\n"


def training_lines(rng: random.Random) -> list[str]:
    """A run with a restart: steps every 0-700 ms (several in one millisecond), checkpoint
    saves, a second "training ..." start after a gap."""
    out, t, step = [line(0, "training ...")], 0, 0
    for i in range(160):
        t += rng.choice((0, 0, 150, 400, 700))
        if i == 90:
            t += 5000
            out.append(line(t, "training ..."))
            continue
        step += 1
        out.append(line(t, f"iteration {step:>8}/     500 | consumed samples: 1 | elapsed time "
                           f"per iteration (ms): {rng.uniform(100, 900):.1f} | throughput per GPU "
                           f"(TFLOP/s/GPU): {rng.uniform(300, 450):.1f} |"))  # fmt: skip
        if step % 25 == 0:
            out.append(line(t, f"saving checkpoint at iteration {step:>8} to /c"))
            t += 300
            out.append(line(t, f"  successfully saved checkpoint from iteration {step:>8} to /c"))
    return out


def gm_status(api: JobAPI) -> dict[str, Any]:
    found = api.read(api.certify("goodputmeasurements", GM))
    assert found is not None
    status: dict[str, Any] = found.get("status") or {}
    return status


def sampler(api: JobAPI) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.operator.certify.measurement_sampler",
         str(api.kubeconfig), NS, "goodputmeasurements", GM],
        cwd=REPO, env=env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert child.stdout is not None and child.stdout.readline().strip() == "sampling"
    return child


def test_a_measurement_killed_at_random_instants_completes_as_one_whole_read(
    job_api: JobAPI,
) -> None:
    rng = random.Random(17)
    lines = training_lines(rng)
    clock = JobClock()
    asked = {"goodputMeasurement": {"logProfileRef": "megatron-training", "sampleInterval": "1s"}}
    jobs = measured_job(job_api, clock, asked, [("w-0", lines[0], False)])
    kill_at = sorted(rng.sample(range(1, len(lines)), KILLS))
    child = sampler(job_api)
    written = 1
    seen: list[str] = []  # the cursor each kill left: the kills landed mid-log
    try:
        for cut in [*kill_at, len(lines)]:
            while written < cut:  # the log grows a few lines at a time while it samples
                written = min(cut, written + rng.randint(1, 4))
                job_api.write_log("w-0", "".join(lines[:written]))
                time.sleep(rng.uniform(0.0, 0.03))
            time.sleep(rng.uniform(0.0, 0.2))  # any instant of a pass
            child.send_signal(signal.SIGKILL)
            assert child.wait(timeout=30) == -signal.SIGKILL
            seen.append(str(gm_status(job_api).get("logCursors")))
            child = sampler(job_api)
    finally:
        child.kill()
        child.wait(timeout=30)
    assert len(set(seen)) >= 3, seen
    set_pod(job_api, "w-0", phase="Succeeded", exit_code=0)
    set_train_job(job_api, WORKLOAD, "Complete")
    clock.advance(3600)
    jobs.reconcile(NS, JOB)
    assert (
        MeasurementReconciler(job_api.client, clock.now, "goodputmeasurements").reconcile(NS, GM)
        is None
    )
    done = gm_status(job_api)
    assert done["interruptionCount"] == 1

    pod = job_api.read(f"/api/v1/namespaces/{NS}/pods/w-0")
    assert pod is not None
    whole = MeasurementReconciler(job_api.client, clock.now, "goodputmeasurements")
    once = read_pod(job_api.client, pod, "node", LOG, None)
    assert once is not None and len(once.read.lines) == len(lines)
    profile = whole.profile("megatron-training")
    assert profile is not None
    anchor = datetime.fromisoformat(done["completionTime"].replace("Z", "+00:00")).astimezone(UTC)
    expected, _ = whole.figures({}, [once], profile, anchor)
    assert {k: done.get(k) for k in FIGURES} == {k: expected.get(k) for k in FIGURES}
