"""The nodes of a stand-in cluster over a simulated fleet: the fleet's hosts, labelled as GPU
feature discovery and the platform label them, with their GPUs allocatable — so that a second
job pinned to hosts whose GPUs a first job holds waits for them, as on a cluster."""

from __future__ import annotations

from typing import Any

from glimmer.backends.sim.certify.nodes import fleet_nodes
from glimmer.certify.grouping import CLIQUE_LABEL, PRODUCT_LABEL
from glimmer.fleet.load import load_topology
from tests.k8s_trainer import (  # noqa: F401 (the fixture)
    MakeTrainerCluster,
    all_reduce_on_hgx,
    eventually,
    trainer_cluster,
)
from tools.k8s_standin.trainer_fleet import GPU_PRESENT, GPU_RESOURCE, label_value
from tools.k8s_standin.trainer_template import REPLICATED_JOB

Obj = dict[str, Any]


def test_the_nodes_are_the_fleets_hosts_with_their_labels_gpus_and_provider(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    with trainer_cluster(provider="aws://") as tc:
        nodes = {n["metadata"]["name"]: n for n in tc.http.get("/api/v1/nodes").json()["items"]}
    topo = load_topology("ai-factory")
    assert sorted(nodes) == sorted(n.hostname for n in topo.nodes)
    for info in fleet_nodes(topo):
        labels = nodes[info.name]["metadata"]["labels"]
        # Every label as the simulator's substrate lists it, made legal for the API.
        assert {k: labels[k] for k in info.labels} == {
            k: label_value(v) for k, v in info.labels.items()
        }
    gb200 = nodes["nvl-node-0000"]
    assert gb200["metadata"]["labels"][PRODUCT_LABEL] == "NVIDIA-GB200"
    assert gb200["metadata"]["labels"][CLIQUE_LABEL] == "domain-a"
    assert gb200["metadata"]["labels"][GPU_PRESENT] == "true"
    assert gb200["status"]["allocatable"][GPU_RESOURCE] == "4"
    assert gb200["spec"]["providerID"] == "aws://nvl-node-0000"
    assert nodes["hgx-node-0001"]["status"]["capacity"][GPU_RESOURCE] == "8"


def test_a_job_pinned_to_hosts_another_job_holds_waits_for_their_gpus(
    trainer_cluster: MakeTrainerCluster,  # noqa: F811
) -> None:
    runtime, first = all_reduce_on_hgx("first")
    _, second = all_reduce_on_hgx("second")
    with trainer_cluster(seconds_per_job=1.0) as tc:
        tc.create_all([runtime, first])
        eventually(lambda: len(tc.pods("first")) == 3, "the first job running")
        tc.create_all([second])

        def waiting() -> list[Obj] | None:
            pods = [
                p for p in tc.pods("second") if p["metadata"]["labels"][REPLICATED_JOB] == "node"
            ]
            conditions = [c for p in pods for c in p["status"].get("conditions") or []]
            held = [c for c in conditions if "Insufficient nvidia.com/gpu" in c.get("message", "")]
            return pods if len(held) == 2 else None

        # While the first prints, the second's node pods find no GPU free on the pinned hosts.
        eventually(waiting, "the second job's node pods unschedulable for want of GPUs")
        assert tc.finished("first")["type"] == "Complete"
        assert tc.finished("second")["type"] == "Complete"
