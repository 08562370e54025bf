"""The Job controller end to end on the Trainer stand-in over a simulated fleet (§3.3, §9.2
scenario 40): the Job's TrainJob really runs (pods placed by the kubelet stand-in, their log
what the fleet simulator says the job prints), and the Job ends with the launcher's log as its
outcome — the same log, exit code and path the simulator reports — or with the failure log of
a failed job, an OOMKilled one, or one that ran past timeoutPerJob; and a BandwidthMeasurement
reads that real launcher log (scenario 36 ``-real-log``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import yaml

from glimmer.backends.kubernetes.client import connect
from glimmer.certify.measure.bandwidth import NCCL_BANDWIDTH, merge
from glimmer.operator.certify.job_reconcile import JobReconciler
from glimmer.operator.certify.measurements import MeasurementReconciler
from glimmer.sim.faults import Fault
from tests.k8s_trainer import (  # noqa: F401 (the fixture)
    MakeTrainerCluster,
    TrainerCluster,
    all_reduce_on_hgx,
    eventually,
    trainer_cluster,
)
from tests.operator.certify.conftest import CERTIFY_CRDS, JobClock
from tests.operator.certify.job_harness import conditions_of, workflow_body

NS = "default"
JOB = "cert-comm-nccl-group-0-iter-1"
HOSTS = ("hgx-node-0001", "hgx-node-0002")
CERTIFY_API = f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}"


def certify_kinds(tc: TrainerCluster) -> None:
    for path in sorted(CERTIFY_CRDS.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                got = tc.http.post(
                    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=doc
                )
                assert got.status_code in (201, 409), got.text
    eventually(lambda: tc.http.get(f"{CERTIFY_API}/jobs").status_code == 200, "the Job kind")


def job_for(train_job: Mapping[str, Any], owner: Mapping[str, Any] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": JOB,
        "annotations": {"certify.glimmer.ai/group-nodes": ",".join(HOSTS)},
    }
    if owner is not None:
        meta["ownerReferences"] = [{
            "apiVersion": "certify.glimmer.ai/v1alpha1", "kind": "Workflow",
            "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"], "controller": True,
        }]  # fmt: skip
    return {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "workload": {"trainJob": copy.deepcopy(dict(train_job["spec"]))},
            "nodeHealthMonitor": {"cel": {"expression": "node.spec.unschedulable == true"}},
        },
    }


def started(tc: TrainerCluster, clock: Any, *, owned: bool = False) -> JobReconciler:
    certify_kinds(tc)
    runtime, train_job = all_reduce_on_hgx()
    tc.create_all([runtime])
    owner = None
    if owned:
        made = tc.http.post(f"{CERTIFY_API}/workflows", json=workflow_body("cert-comm-nccl"))
        assert made.status_code == 201, made.text
        owner = made.json()
    got = tc.http.post(f"{CERTIFY_API}/jobs", json=job_for(train_job, owner))
    assert got.status_code == 201, got.text
    return JobReconciler(connect(tc.cluster.kubeconfig), clock.now, running_requeue=0.1)


def job(tc: TrainerCluster) -> dict[str, Any]:
    body: dict[str, Any] = tc.http.get(f"{CERTIFY_API}/jobs/{JOB}").json()
    return body


def ended(tc: TrainerCluster, rec: JobReconciler) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        rec.reconcile(NS, JOB)
        body = job(tc)
        trio = conditions_of(body)
        terminal = any(trio.get(k, ("", ""))[0] == "True" for k in ("Succeeded", "Failed"))
        return body if terminal else None

    found: dict[str, Any] = eventually(done, "the Job ended", 60)
    return found


class HostClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


def test_a_job_that_succeeds_keeps_the_launchers_log_exit_code_and_path_as_its_outcome(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    with trainer_cluster() as tc:
        rec = started(tc, HostClock())
        body = ended(tc, rec)
        workload = body["status"]["workloadRef"]["name"]
        simulated = tc.simulated(workload)
        lead_log = tc.lead_log(workload)
    assert conditions_of(body)["Succeeded"] == ("True", "WorkloadCompleted")
    outcome = body["status"]["outcome"]
    assert outcome["text"] == lead_log
    assert (outcome["exitCode"], outcome["path"]) == (simulated["exit_code"], simulated["path"])
    assert "Avg bus bandwidth" in outcome["text"]


def test_a_failed_job_on_the_cluster_keeps_the_launchers_failure_log(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    with trainer_cluster([Fault("nic_link_down", "nic:hgx-node-0002/eth3")]) as tc:
        rec = started(tc, HostClock())
        body = ended(tc, rec)
    assert conditions_of(body)["Failed"] == ("True", "WorkloadFailed")
    log = body["status"]["failureLog"]
    assert log["exitCode"] == 1 and "-launcher-" in log["podName"]
    assert "hgx-node-0002:eth3 port state DOWN" in log["tail"]
    outcome = body["status"]["outcome"]
    assert outcome["exitCode"] == 1
    assert "hgx-node-0002:eth3 port state DOWN" in outcome["text"]
    assert sorted(f["name"] for f in body["status"]["failedNodes"]) == list(HOSTS)


def test_an_oom_killed_launcher_is_the_failure_log_the_job_keeps(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    with trainer_cluster(oom_nodes=frozenset({"hgx-node-0001"})) as tc:
        rec = started(tc, HostClock())
        body = ended(tc, rec)
    log = body["status"]["failureLog"]
    assert (log["exitCode"], log["reason"], log["nodeName"]) == (137, "OOMKilled", "hgx-node-0001")
    assert body["status"]["outcome"]["crashedOn"] == ["hgx-node-0001"]


def test_a_job_running_past_its_timeout_on_the_cluster_is_ended_with_the_launchers_log(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    clock = JobClock()
    with trainer_cluster(seconds_per_job=30.0) as tc:
        rec = started(tc, clock, owned=True)  # the Workflow's timeoutPerJob: 10m

        def running() -> bool:
            rec.reconcile(NS, JOB)
            return conditions_of(job(tc)).get("InProgress") == ("True", "WorkloadRunning")

        eventually(running, "the workload running", 60)
        clock.advance(11 * 60)
        body = ended(tc, rec)
        workload = body["status"]["workloadRef"]["name"]
        eventually(lambda: not tc.pods(workload), "the workload's pods collected")
    assert conditions_of(body)["Failed"] == ("True", "JobTimedOut")
    log = body["status"]["failureLog"]
    assert log["reason"] == "Timeout" and log["podName"]
    assert body["status"]["outcome"]["error"] == "Job exceeded timeoutPerJob"


def test_a_bandwidth_measurement_reads_the_real_launcher_log_into_running_averages(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    with trainer_cluster() as tc:
        certify_kinds(tc)
        runtime, train_job = all_reduce_on_hgx()
        tc.create_all([runtime])
        body = job_for(train_job)
        body["spec"]["bandwidthMeasurement"] = {"logProfileRef": "nccl-bandwidth"}
        assert tc.http.post(f"{CERTIFY_API}/jobs", json=body).status_code == 201
        client = connect(tc.cluster.kubeconfig)
        rec = JobReconciler(client, HostClock().now, running_requeue=0.1)
        ended(tc, rec)
        name = f"{JOB}-bandwidth"
        assert (
            MeasurementReconciler(client, HostClock().now, "bandwidthmeasurements").reconcile(
                NS, name
            )
            is None
        )
        bm = tc.http.get(f"{CERTIFY_API}/bandwidthmeasurements/{name}").json()
        lead_log = tc.lead_log(body["metadata"]["name"] + "-workload")
    expected = merge([], NCCL_BANDWIDTH.parse(lead_log))
    assert len(expected) > 10  # the table of sizes from 8 B up
    assert [(r["sizeBytes"], r["samples"]) for r in bm["status"]["results"]] == [
        (r.size, r.samples) for r in expected
    ]
    assert [float(r["busBW"]) for r in bm["status"]["results"]] == [
        round(r.bus_bw, 6) for r in expected
    ]
    assert conditions_of(bm)["Complete"] == ("True", "JobSucceeded")
