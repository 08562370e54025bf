"""Nodes as the certification core sees them: labels, taints and cordon, sorted by name."""

from __future__ import annotations

from glimmer.backends.kubernetes.certify.nodes import cluster_nodes, node_info
from glimmer.certify.grouping import NodeInfo, Taint
from tests.backends.kubernetes.certify.conftest import Api


def test_node_info_keeps_labels_taints_and_cordon() -> None:
    node = {
        "metadata": {"name": "gpu-01", "labels": {"nvidia.com/gpu.clique": "c1.0"}},
        "spec": {
            "unschedulable": True,
            "taints": [
                {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
                {"key": "dedicated", "value": "certify", "effect": "NoExecute"},
            ],
        },
    }
    assert node_info(node) == NodeInfo(
        name="gpu-01",
        labels={"nvidia.com/gpu.clique": "c1.0"},
        taints=(
            Taint("nvidia.com/gpu", "", "NoSchedule"),
            Taint("dedicated", "certify", "NoExecute"),
        ),
        unschedulable=True,
    )


def test_node_info_of_a_bare_node_has_the_defaults() -> None:
    assert node_info({"metadata": {"name": "n"}}) == NodeInfo(name="n")


def test_cluster_nodes_lists_every_node_sorted_by_name(api: Api) -> None:
    for name in ("gpu-03", "gpu-01", "gpu-02"):
        body = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"rack": name[-1]}},
        }
        assert api.http.post("/api/v1/nodes", json=body).status_code == 201
    found = cluster_nodes(api.client)
    assert [n.name for n in found] == ["gpu-01", "gpu-02", "gpu-03"]
    assert found[0].labels["rack"] == "1"
