"""The Trainer stand-in's torch TrainJobs as the catalog renders them: ``dcgmi diag`` on one
node and a Megatron training job over a group, each printing what the fleet simulator prints
for its nodes, failing as the simulated job fails."""

from __future__ import annotations

from typing import Any

from glimmer.backends.sim.certify.dcgm import dcgm_log
from glimmer.certify.jobs import DcgmJob
from glimmer.certify.measure.goodput import parse_training
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim
from tests.k8s_trainer import (  # noqa: F401 (the fixture)
    MakeTrainerCluster,
    eventually,
    pinned,
    rendered,
    trainer_cluster,
)
from tools.k8s_standin.trainer_template import REPLICATED_JOB

Obj = dict[str, Any]
HGX = ("hgx-node-0001", "hgx-node-0002")


def test_dcgm_diag_on_one_node_passes_there_and_fails_where_a_gpu_is_faulty(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    deps, train_job = rendered("diagnostics", "dcgm-level2", "NVIDIA-GB200")
    healthy = pinned(train_job, ["nvl-node-0004"])
    healthy["metadata"]["name"] = "diag-healthy"
    faulty = pinned(train_job, ["nvl-node-0005"])
    faulty["metadata"]["name"] = "diag-faulty"
    fault = Fault("gpu_row_remap", "gpu:nvl-node-0005/1")
    with trainer_cluster([fault], seed=3) as tc:
        tc.create_all([*deps, healthy, faulty])
        assert tc.finished("diag-healthy")["type"] == "Complete"
        failed = tc.finished("diag-faulty")
        assert (failed["type"], failed["reason"]) == ("Failed", "FailedJobs")
        good, bad = tc.lead_log("diag-healthy"), tc.lead_log("diag-faulty")
        (lead,) = tc.pods("diag-faulty")
    assert lead["spec"]["nodeName"] == "nvl-node-0005"
    state = lead["status"]["containerStatuses"][0]["state"]["terminated"]
    assert state["exitCode"] != 0 and state["reason"] == "Error"
    twin = FleetSim(load_topology("ai-factory"), [fault])
    assert good == dcgm_log(twin, DcgmJob("nvl-node-0004", 2, 3)).text
    assert bad == dcgm_log(twin, DcgmJob("nvl-node-0005", 2, 3)).text
    assert "row remapping failed" in bad


def test_a_training_job_over_two_nodes_prints_megatrons_log_on_rank_0(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    deps, train_job = rendered("training", "nemotron5-8b", "NVIDIA-H100-80GB-HBM3")
    name = train_job["metadata"]["name"]
    with trainer_cluster(seconds_per_job=1.0) as tc:
        tc.create_all([*deps, pinned(train_job, HGX)])
        pods = eventually(lambda: len(tc.pods(name)) == 2 and tc.pods(name), "both ranks")
        assert tc.finished(name)["type"] == "Complete"
        log = tc.lead_log(name)
    assert {p["metadata"]["labels"][REPLICATED_JOB] for p in pods} == {"node"}
    env = [{e["name"]: e.get("value") for e in p["spec"]["containers"][0]["env"]} for p in pods]
    assert sorted(e["PET_NODE_RANK"] for e in env) == ["0", "1"]
    assert {e["PET_NNODES"] for e in env} == {"2"} and {e["TRAIN_ITERS"] for e in env} == {"50"}
    got = parse_training(log)
    assert got is not None and got.highest_step == 50


def test_a_training_job_holding_a_node_that_crashes_fails(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    deps, train_job = rendered("training", "nemotron5-8b", "NVIDIA-H100-80GB-HBM3")
    name = train_job["metadata"]["name"]
    with trainer_cluster([Fault("gpu_xid_burst", "gpu:hgx-node-0002/0")]) as tc:
        tc.create_all([*deps, pinned(train_job, HGX)])
        failed = tc.finished(name)
        log = tc.lead_log(name)
    assert (failed["type"], failed["reason"]) == ("Failed", "FailedJobs")
    assert "peer hgx-node-0002 lost" in log
