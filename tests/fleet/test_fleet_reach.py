"""Reach: which GPUs (and NVLink edges) each kind of key touches (§4.3, our index)."""

from __future__ import annotations

from glimmer.fleet.topology import Topology


def keys(topo: Topology, key: str) -> list[str]:
    return [topo.gpu_keys[int(i)] for i in topo.gpus_reached(key)]


def test_gpu_node_and_rack_reach(factory: Topology) -> None:
    assert keys(factory, "gpu:hgx-node-0001/3") == ["gpu:hgx-node-0001/3"]
    assert keys(factory, "node:hgx-node-0002") == [f"gpu:hgx-node-0002/{s}" for s in range(8)]
    assert factory.gpus_reached("rack:site-a/nvl-a").size == 72
    assert factory.gpus_reached("rack:site-a/pcie-a").size == 8
    assert factory.gpus_reached("site:site-a").size == factory.gpu_count


def test_parts_of_a_node_reach_its_gpus(factory: Topology) -> None:
    node = [f"gpu:nvl-node-0003/{s}" for s in range(4)]
    for key in (
        "tray:site-a/nvl-a/compute/3",
        "cpu:nvl-node-0003/1",
        "nic:nvl-node-0003/eth2",
        "device:nvl-node-0003-bmc",
    ):
        assert keys(factory, key) == node, key


def test_nvl72_switch_tray_reaches_its_whole_domain(factory: Topology) -> None:
    assert factory.kind_of("tray:site-a/nvl-a/nvswitch/4") == "nvswitch_tray"
    assert factory.gpus_reached("tray:site-a/nvl-a/nvswitch/4").size == 72
    assert factory.gpus_reached("domain:site-a/nvl-a/domain-a").size == 72
    assert factory.gpus_reached("partition:site-a/nvl-a/domain-a/default").size == 72


def test_fabric_reach_follows_nic_attachments(factory: Topology) -> None:
    # Rail 1 carries only nodes with a NIC on rail 1: the NVL72 trays and the HGX servers.
    rail1 = factory.nodes_reached("switch:backend-a/backend-leaf-1")
    assert {factory.nodes[int(n)].pool for n in rail1} == {"hgx-pool", "nvl-pool"}
    assert factory.gpus_reached("fabric:frontend-a").size == factory.gpu_count
    port = next(c.port_key for c in factory.nodes[0].nics if c.fabric == "backend-a")
    assert factory.kind_of(port) == "port"
    assert factory.nodes_reached(port).tolist() == [0]
    assert factory.kind_of("port:backend-a/backend-leaf-1/swp23") == "port"  # declared, unused
    assert factory.gpus_reached("port:backend-a/backend-leaf-1/swp23").size == 0
    assert factory.kind_of("port:backend-a/backend-leaf-1/swp99") is None


def test_storage_and_scheduling_reach(factory: Topology) -> None:
    assert keys(factory, "storage:storage-a") == [
        f"gpu:pcie-node-000{n}/{s}" for n in (0, 1) for s in range(4)
    ]
    assert keys(factory, "gpuworkload:scheduler-a/serving-a") == ["gpu:pcie-node-0000/0"]
    assert factory.gpus_reached("project:scheduler-a/research").size == 16
    assert factory.gpus_reached("scheduler:scheduler-a").size == 17
    assert factory.gpus_reached("worker:scheduler-a/training-a/worker-1").size == 4
    assert factory.kind_of("project:scheduler-a/serving") == "project"


def test_nvlink_keys_resolve_without_being_stored(factory: Topology) -> None:
    stem = "site-a/hgx-a/hgx/hgx-node-0001/baseboard"
    assert factory.kind_of(f"nvport:{stem}/0/40") == "nvport"
    assert factory.kind_of(f"nvport:{stem}/0/64") is None
    assert factory.kind_of("nvlink:hgx-node-0001/0/2") == "nvlink"
    assert factory.kind_of("nvlink:hgx-node-0001/0/18") is None
    assert keys(factory, "nvlink:hgx-node-0001/0/2") == ["gpu:hgx-node-0001/0"]
    assert factory.gpus_reached(f"nvport:{stem}/0/40").tolist() == [
        factory.gpu_index["gpu:hgx-node-0001/0"]
    ]
    assert factory.gpus_reached(f"nvswitch:{stem}/0").size == 8


def test_unknown_keys_reach_nothing(factory: Topology) -> None:
    for key in ("gpu:nope/0", "rack:site-a/nope", "nonsense", "nvport:x/0/1", "nvlink:nope/0/0"):
        assert factory.kind_of(key) is None
        assert factory.gpus_reached(key).size == 0
        assert factory.edges_reached(key).size == 0


def test_vectorised_view_is_consistent(factory: Topology) -> None:
    for node in factory.nodes:
        idx = list(node.gpu_indices)
        assert [factory.gpu_keys[i] for i in idx] == [
            f"gpu:{node.hostname}/{s}" for s in range(node.gpu_count)
        ]
        assert set(factory.gpu_node[idx].tolist()) == {node.index}
        assert set(factory.gpu_rack[idx].tolist()) == {node.rack}
        assert factory.models[int(factory.gpu_model[idx[0]])].key == node.model
        assert factory.pools[int(factory.gpu_pool[idx[0]])] == node.pool
    assert factory.node_rack.tolist() == [n.rack for n in factory.nodes]
    assert list(factory.gpu_keys) == sorted(
        factory.gpu_keys, key=lambda k: (k.rsplit("/", 1)[0], int(k.rsplit("/", 1)[1]))
    )
