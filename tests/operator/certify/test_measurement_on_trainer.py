"""A BandwidthMeasurement sampled again and again while the Trainer stand-in's launcher prints
its nccl-tests table over seconds (§6.1, ADR-005): each sample reads only what is new past its
cursor, the running averages grow as the table does, and the Complete figures equal one read
of the whole launcher log. The stand-in's kubelet writes no timestamps, so this is the
cursor's line-count path; the timestamped path is the property test's."""

from __future__ import annotations

import time
from typing import Any

from glimmer.backends.kubernetes.client import connect
from glimmer.certify.measure.bandwidth import NCCL_BANDWIDTH, merge
from glimmer.operator.certify.job_reconcile import JobReconciler
from glimmer.operator.certify.measurements import MeasurementReconciler
from tests.k8s_trainer import (  # noqa: F401 (the fixture)
    MakeTrainerCluster,
    all_reduce_on_hgx,
    eventually,
    trainer_cluster,
)
from tests.operator.certify.job_harness import conditions_of
from tests.operator.certify.test_job_on_trainer import (
    CERTIFY_API,
    JOB,
    NS,
    HostClock,
    certify_kinds,
    job_for,
)

NAME = f"{JOB}-bandwidth"
SAMPLE_PAUSE = 0.25  # host seconds between samples while the launcher prints


def test_a_bandwidth_measurement_sampled_while_the_launcher_prints_equals_its_whole_log(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    with trainer_cluster(seconds_per_job=6.0) as tc:
        certify_kinds(tc)
        runtime, train_job = all_reduce_on_hgx()
        tc.create_all([runtime])
        body = job_for(train_job)
        body["spec"]["bandwidthMeasurement"] = {"logProfileRef": "nccl-bandwidth"}
        assert tc.http.post(f"{CERTIFY_API}/jobs", json=body).status_code == 201
        client = connect(tc.cluster.kubeconfig)
        jobs = JobReconciler(client, HostClock().now, running_requeue=0.1)
        bms = MeasurementReconciler(client, HostClock().now, "bandwidthmeasurements")

        def status() -> dict[str, Any]:
            got: dict[str, Any] = tc.http.get(f"{CERTIFY_API}/bandwidthmeasurements/{NAME}").json()
            return got.get("status") or {}

        totals: list[int] = []  # rows counted so far, at each sample while the Job runs
        while True:
            jobs.reconcile(NS, JOB)
            trio = conditions_of(tc.http.get(f"{CERTIFY_API}/jobs/{JOB}").json())
            if any(trio.get(k, ("", ""))[0] == "True" for k in ("Succeeded", "Failed")):
                break
            if tc.http.get(f"{CERTIFY_API}/bandwidthmeasurements/{NAME}").status_code == 200:
                bms.reconcile(NS, NAME)
                totals.append(sum(r["samples"] for r in status().get("results") or ()))
            time.sleep(SAMPLE_PAUSE)
        assert bms.reconcile(NS, NAME) is None
        done = status()
        lead_log = tc.lead_log(f"{JOB}-workload")
    expected = merge([], NCCL_BANDWIDTH.parse(lead_log))
    assert done["results"] == [
        {
            "sizeBytes": r.size,
            "algBW": f"{r.alg_bw:.6f}",
            "busBW": f"{r.bus_bw:.6f}",
            "samples": r.samples,
        }
        for r in expected
    ]
    # Sampled while it printed: the table was seen part-way, more of it sample after sample.
    partial = [t for t in totals if 0 < t < sum(r.samples for r in expected)]
    assert len(set(partial)) >= 2, totals
    assert totals == sorted(totals)
    assert conditions_of({"status": done})["Complete"] == ("True", "JobSucceeded")
