"""The Trainer stand-in runs an MPI TrainJob as glimmer's own catalog renders it: the JobSet's
pods (node job, then the launcher once the nodes are Ready) land on the pinned hosts, and the
launcher prints the nccl-tests table the fleet simulator computes for those hosts."""

from __future__ import annotations

from typing import Any

from glimmer.backends.sim.certify.nccl import run_nccl
from glimmer.certify.jobs import NcclJob
from glimmer.certify.measure.bandwidth import parse_table
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
from tools.k8s_standin.trainer_template import (
    ANCESTOR_LABEL,
    COMPLETION_INDEX,
    JOB_INDEX,
    JOBSET_NAME,
    REPLICATED_JOB,
)

Obj = dict[str, Any]
HGX = ("hgx-node-0001", "hgx-node-0002")
ALL_REDUCE = ("communication", "nccl-all-reduce")


def test_an_mpi_trainjob_runs_its_pods_on_the_pinned_hosts_and_completes_with_the_table(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    deps, train_job = rendered(*ALL_REDUCE, "NVIDIA-H100-80GB-HBM3", "{nodesPerJob: 2}")
    train_job = pinned(train_job, HGX)
    name = train_job["metadata"]["name"]
    with trainer_cluster(seed=7, seconds_per_job=1.0) as tc:
        tc.create_all([*deps, train_job])

        def running() -> dict[str, list[Obj]] | None:
            by_job: dict[str, list[Obj]] = {}
            for pod in tc.pods(name):
                by_job.setdefault(pod["metadata"]["labels"][REPLICATED_JOB], []).append(pod)
            launched = by_job.get("launcher") and len(by_job.get("node", [])) == 2
            placed = all(p["spec"].get("nodeName") for p in by_job.get("node", []))
            return by_job if launched and placed else None

        # While the launcher prints (1 s): every pod of the JobSet, placed.
        by_job = eventually(running, "the launcher and both node pods placed")
        done = tc.finished(name)
        assert (done["type"], done["reason"]) == ("Complete", "AllJobsCompleted")
        (launcher,) = by_job["launcher"]
        # JobSet's names and labels, the ancestor label on the trainer step only.
        assert launcher["metadata"]["name"].startswith(f"{name}-launcher-0-0-")
        assert launcher["metadata"]["labels"][ANCESTOR_LABEL] == "trainer"
        assert launcher["metadata"]["labels"][JOBSET_NAME] == name
        assert launcher["metadata"]["labels"][JOB_INDEX] == "0"
        ordered = sorted(by_job["node"], key=lambda p: p["metadata"]["labels"][COMPLETION_INDEX])
        assert [p["metadata"]["name"][: -len("-xxxxx")] for p in ordered] == [
            f"{name}-node-0-0",
            f"{name}-node-0-1",
        ]
        ranks = tuple(p["spec"]["nodeName"] for p in ordered)
        assert sorted(ranks) == sorted(HGX)  # one pod per pinned host: 8 GPUs fill a node
        assert all(ANCESTOR_LABEL not in p["metadata"]["labels"] for p in ordered)
        finished = tc.pods(name)
        (ended,) = [p for p in finished if p["metadata"]["labels"][REPLICATED_JOB] == "launcher"]
        assert ended["status"]["phase"] == "Succeeded"
        log = tc.log(launcher["metadata"]["name"])
        status = tc.train_job(name)["status"]
    launched = next(j for j in status["jobsStatus"] if j["name"] == "launcher")
    assert launched["succeeded"] == 1 and launched["failed"] == 0
    table = parse_table(log)
    assert len(table.rows) == 32 and table.avg_bus_bw and table.wrong == 0
    # The launcher prints what the simulator's certification substrate prints for the job.
    twin = FleetSim(load_topology("ai-factory"), [])
    expected = run_nccl(twin, NcclJob(name, "all_reduce", ranks, nvlink=False, seed=7))
    assert log == expected.text


def test_a_degraded_nic_lowers_bus_bandwidth_in_a_job_holding_its_node_only(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    deps, train_job = rendered(*ALL_REDUCE, "NVIDIA-GB200", "{nodesPerJob: 2, enableMNNVL: false}")
    sick = pinned(train_job, ("nvl-node-0002", "nvl-node-0003"))
    sick["metadata"]["name"] = "with-the-nic"
    healthy = pinned(train_job, ("nvl-node-0000", "nvl-node-0001"))
    healthy["metadata"]["name"] = "without-it"
    with trainer_cluster([Fault("nic_degraded", "nic:nvl-node-0003/eth2")]) as tc:
        tc.create_all([*deps, sick, healthy])
        for name in ("with-the-nic", "without-it"):
            assert tc.finished(name)["type"] == "Complete"
        slow = parse_table(tc.lead_log("with-the-nic")).peak_bus_bw()
        assert tc.simulated("with-the-nic")["path"] == "network"  # MNNVL off: over the NICs
        fast = parse_table(tc.lead_log("without-it")).peak_bus_bw()
    assert slow is not None and fast is not None
    assert slow < 0.6 * fast


def test_the_launcher_prints_its_table_while_it_runs_not_all_at_once(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    deps, train_job = rendered(*ALL_REDUCE, "NVIDIA-H100-80GB-HBM3", "{nodesPerJob: 2}")
    name = train_job["metadata"]["name"]
    with trainer_cluster(seconds_per_job=3.0) as tc:
        tc.create_all([*deps, pinned(train_job, HGX)])

        def partway() -> str | None:
            pods = [
                p for p in tc.pods(name) if p["metadata"]["labels"][REPLICATED_JOB] == "launcher"
            ]
            if not pods or pods[0]["status"].get("phase") != "Running":
                return None
            got = tc.http.get(f"/api/v1/namespaces/default/pods/{pods[0]['metadata']['name']}/log")
            return got.text if got.status_code == 200 and "# Using devices" in got.text else None

        # Running, the devices printed and the table not yet: a Node changed now is seen now.
        early = eventually(partway, "the launcher running with part of its log")
        assert tc.finished(name)["type"] == "Complete"
        full = tc.lead_log(name)
    assert "# Avg bus bandwidth" not in early and full.startswith(early)
    assert "# Avg bus bandwidth" in full
