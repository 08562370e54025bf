"""A TrainJob's life on the Trainer stand-in: refused when invalid (the real Trainer CRDs), run
against a namespaced or cluster runtime (waiting for one created late), Failed when its job
fails or is killed by memory, kept without pods while suspended, and its pods collected when
it is deleted."""

from __future__ import annotations

import copy
from typing import Any

from glimmer.sim.faults import Fault
from tests.k8s_trainer import (  # noqa: F401 (the fixture)
    MakeTrainerCluster,
    TrainerCluster,
    all_reduce_on_hgx,
    eventually,
    trainer_cluster,
)
from tools.k8s_standin.trainer_template import REPLICATED_JOB

Obj = dict[str, Any]
MERGE = {"Content-Type": "application/merge-patch+json"}


def launcher(tc: TrainerCluster, name: str) -> Obj:
    (pod,) = [p for p in tc.pods(name) if p["metadata"]["labels"][REPLICATED_JOB] == "launcher"]
    return pod


def terminated(pod: Obj) -> Obj:
    state: Obj = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    return state


def test_an_invalid_trainjob_or_runtime_is_refused_by_the_trainer_schema(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    runtime, job = all_reduce_on_hgx()
    no_runtime = copy.deepcopy(job)
    no_runtime["spec"]["runtimeRef"] = {"kind": "TrainingRuntime"}
    wrong_type = copy.deepcopy(job)
    wrong_type["spec"]["trainer"]["numNodes"] = "two"
    bad_runtime = copy.deepcopy(runtime)
    bad_runtime["spec"]["mlPolicy"]["numNodes"] = "one"
    with trainer_cluster() as tc:
        for obj, field in (
            (no_runtime, "spec.runtimeRef.name"),
            (wrong_type, "spec.trainer.numNodes"),
            (bad_runtime, "spec.mlPolicy.numNodes"),
        ):
            got = tc.create(obj)
            assert got.status_code == 422, got.text
            assert got.json()["details"]["causes"][0]["field"] == field


def test_a_trainjob_waits_for_a_runtime_created_late_and_runs_on_a_cluster_runtime(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    runtime, job = all_reduce_on_hgx("late")
    cluster_runtime = copy.deepcopy(runtime)
    cluster_runtime["kind"] = "ClusterTrainingRuntime"
    cluster_runtime["metadata"].pop("namespace", None)
    on_cluster = copy.deepcopy(job)
    on_cluster["metadata"]["name"] = "cluster-wide"
    on_cluster["spec"]["runtimeRef"]["kind"] = "ClusterTrainingRuntime"
    with trainer_cluster() as tc:
        tc.create_all([job])
        assert tc.pods("late") == [] and "status" not in tc.train_job("late")
        tc.create_all([runtime, cluster_runtime, on_cluster])
        assert tc.finished("late")["type"] == "Complete"
        assert tc.finished("cluster-wide")["type"] == "Complete"


def test_a_job_that_fails_fails_its_trainjob_with_the_launchers_exit_code(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    runtime, job = all_reduce_on_hgx()
    with trainer_cluster([Fault("nic_link_down", "nic:hgx-node-0002/eth3")]) as tc:
        tc.create_all([runtime, job])
        failed = tc.finished("job")
        assert (failed["type"], failed["status"], failed["reason"]) == (
            "Failed",
            "True",
            "FailedJobs",
        )
        pod = launcher(tc, "job")
        log = tc.log(pod["metadata"]["name"])
        status = tc.train_job("job")["status"]
    assert pod["status"]["phase"] == "Failed" and terminated(pod)["exitCode"] == 1
    assert "hgx-node-0002:eth3 port state DOWN" in log
    assert "Complete" not in {c["type"] for c in status["conditions"]}
    launched = next(j for j in status["jobsStatus"] if j["name"] == "launcher")
    assert launched["failed"] == 1


def test_a_job_killed_by_memory_ends_its_lead_container_oomkilled(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    runtime, job = all_reduce_on_hgx()
    with trainer_cluster(oom_nodes=frozenset({"hgx-node-0001"})) as tc:
        tc.create_all([runtime, job])
        assert tc.finished("job")["type"] == "Failed"
        state = terminated(launcher(tc, "job"))
    assert (state["exitCode"], state["reason"]) == (137, "OOMKilled")


def test_a_suspended_trainjob_keeps_its_pods_absent_until_it_is_resumed(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    runtime, job = all_reduce_on_hgx()
    job["spec"]["suspend"] = True
    with trainer_cluster() as tc:
        tc.create_all([runtime, job])
        suspended = eventually(lambda: tc.conditions("job").get("Suspended"), "Suspended")
        assert (suspended["status"], suspended["reason"]) == ("True", "Suspended")
        jobs = tc.train_job("job")["status"]["jobsStatus"]
        assert {j["name"]: j["suspended"] for j in jobs} == {"node": 1, "launcher": 1}
        assert tc.pods("job") == []
        got = tc.http.patch(
            tc.train_job_path("job"), json={"spec": {"suspend": False}}, headers=MERGE
        )
        assert got.status_code == 200, got.text
        assert tc.finished("job")["type"] == "Complete"
        resumed = tc.conditions("job")["Suspended"]
    assert (resumed["status"], resumed["reason"]) == ("False", "Resumed")


def test_deleting_a_trainjob_removes_its_pods(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    runtime, job = all_reduce_on_hgx()
    with trainer_cluster(seconds_per_job=60.0) as tc:
        tc.create_all([runtime, job])
        eventually(lambda: len(tc.pods("job")) == 3, "the node pods and the launcher")
        got = tc.http.delete(tc.train_job_path("job"))
        assert got.status_code == 200, got.text
        eventually(lambda: tc.pods("job") == [], "every pod of the deleted TrainJob gone", 20)


def test_a_pod_deleted_while_its_job_runs_fails_the_trainjob(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    runtime, job = all_reduce_on_hgx()
    with trainer_cluster(seconds_per_job=60.0) as tc:
        tc.create_all([runtime, job])
        pods = eventually(lambda: len(tc.pods("job")) == 3 and tc.pods("job"), "the job running")
        (node,) = [p for p in pods if p["spec"].get("nodeName") == "hgx-node-0002"]
        gone = tc.http.delete(f"/api/v1/namespaces/default/pods/{node['metadata']['name']}")
        assert gone.status_code == 200, gone.text
        # Its Job allows no retry: the JobSet fails, and the pods still running go.
        assert tc.finished("job", timeout=20)["type"] == "Failed"
        eventually(lambda: all(p["status"].get("phase") != "Running" for p in tc.pods("job")),
                   "nothing of the failed TrainJob running", 20)  # fmt: skip
