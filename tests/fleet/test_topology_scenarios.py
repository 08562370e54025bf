"""specs/fleet.md §8 scenarios on declaration, identity and topology (1–7, 26, 29–31)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from fleet_docs import build_doc, builtin_doc

from glimmer.fleet.export import to_json
from glimmer.fleet.topology import Topology

SRC = {"url": "https://example.test/d", "revision": "r1", "sha256": "b" * 64, "section": "s"}


def dumped(topo: Topology) -> str:
    return json.dumps(to_json(topo), sort_keys=True)


def test_two_builds_serialise_byte_identically() -> None:
    doc = builtin_doc("ai-factory")
    assert dumped(build_doc(doc)) == dumped(build_doc(doc))


def _reverse_everything(doc: dict[str, Any]) -> None:
    spec = doc["spec"]
    for key in ("racks", "pools", "fabrics", "storageClusters", "sites"):
        spec[key].reverse()
    for fabric in spec["fabrics"]:
        fabric["devices"].reverse()
        fabric["links"] = list(reversed(fabric.get("links", [])))
    for pool in spec["pools"]:
        pool["nics"].reverse()
        pool["placements"].reverse()
    for sched in spec["schedulers"]:
        sched["projects"].reverse()
        sched["workloads"].reverse()
        for wl in sched["workloads"]:
            wl["workers"].reverse()


def test_declaration_order_changes_nothing() -> None:
    doc = builtin_doc("ai-factory")
    before = dumped(build_doc(doc))
    _reverse_everything(doc)
    assert dumped(build_doc(doc)) == before


def test_another_seed_changes_every_hash() -> None:
    a = builtin_doc("ai-factory")
    b = builtin_doc("ai-factory")
    b["metadata"]["name"] = "ai-factory-b"
    ta, tb = build_doc(a), build_doc(b)
    assert ta.gpu_keys == tb.gpu_keys
    assert not set(ta.gpu_uuids) & set(tb.gpu_uuids)
    assert ta.nodes[0].serial != tb.nodes[0].serial


def test_reference_fixture_sizes(reference: Topology) -> None:
    assert len(reference.nodes) == 20 and reference.gpu_count == 80
    (domain,) = reference.domains
    assert domain.key == "domain:site-a/nvl-a/domain-a" and len(domain.gpus) == 72
    assert len(domain.switches) == 18 and len(domain.switch_trays) == 9
    assert sum(reference.nvswitches[s].port_count for s in domain.switches) == 1296
    assert [p.name for p in domain.partitions] == ["default"]
    assert reference.edge_count == 0  # no GPU↔port wiring is invented without a sourced map
    assert len(reference.racks) == 2 and len(reference.fabric_switches) == 6


def test_nvl72_trays_and_grace_cpus(reference: Topology) -> None:
    node = reference.nodes[reference.node_index["nvl-node-0017"]]
    assert node.tray_key == "tray:site-a/nvl-a/compute/17" and node.slot == 17
    assert node.cpu_keys == ("cpu:nvl-node-0017/0", "cpu:nvl-node-0017/1")
    assert node.tray_id.startswith("SYN")


def test_storage_client_uses_its_nic_and_ports_are_assigned(reference: Topology) -> None:
    node = reference.nodes[reference.node_index["pcie-node-0000"]]
    eth0 = next(n for n in node.nics if n.name == "eth0")
    assert node.storage_client == "client:storage-a/pcie-node-0000"
    assert eth0.ip == "10.30.0.10" and eth0.port_key == "port:frontend-a/frontend-leaf-a/swp19"
    assert node.ip == "10.10.0.10" and node.bmc_ip == "10.20.0.10"


def test_automatic_ports_follow_key_order_around_reserved_ones(reference: Topology) -> None:
    ports = {
        n.hostname: next(c.port_key for c in n.nics if c.name == "eth1") for n in reference.nodes
    }
    assert ports["nvl-node-0000"] == "port:backend-a/backend-leaf-0/swp1"
    assert ports["nvl-node-0017"] == "port:backend-a/backend-leaf-0/swp18"
    assert ports["pcie-node-0001"] == "port:backend-a/backend-leaf-0/swp20"


def test_facility_pdu_keeps_its_explicit_port_and_ip() -> None:
    doc = builtin_doc("ai-factory")
    rack = next(r for r in doc["spec"]["racks"] if r["name"] == "pcie-a")
    rack["facilityDevices"] = [
        {"name": "pdu-a", "kind": "pdu", "staticPowerW": 100, "managementIp": "10.20.4.1",
         "nics": [{"name": "eth0", "ip": "10.40.0.1", "fabric": "frontend-a",
                   "switch": "frontend-leaf-a", "port": "swp22", "speedGbps": 1}]}
    ]  # fmt: skip
    topo = build_doc(doc)
    (pdu,) = topo.devices
    assert pdu.nics[0].port_key == "port:frontend-a/frontend-leaf-a/swp22"
    assert pdu.nics[0].ip == "10.40.0.1"
    assert topo.racks[pdu.rack].static_power_w == 100
    assert topo.gpus_reached("device:pdu-a").size == 8  # the PCIe rack's GPUs


def test_custom_nvl72_partition_replaces_the_default() -> None:
    doc = builtin_doc("ai-factory")
    rack = next(r for r in doc["spec"]["racks"] if r["name"] == "nvl-a")
    left = [f"gpu:nvl-node-{n:04d}/{s}" for n in range(9) for s in range(4)]
    right = [f"gpu:nvl-node-{n:04d}/{s}" for n in range(9, 18) for s in range(4)]
    rack["nvlink"]["partitions"] = [
        {"name": "left", "gpus": left},
        {"name": "right", "gpus": right},
    ]
    topo = build_doc(doc)
    nvl = next(d for d in topo.domains if d.kind == "nvl72")
    assert [p.name for p in nvl.partitions] == ["left", "right"]
    assert topo.gpus_reached("partition:site-a/nvl-a/domain-a/left").size == 36
    assert topo.kind_of("partition:site-a/nvl-a/domain-a/default") is None


def _mapped_nvl72(doc: dict[str, Any]) -> None:
    """The repo's test-only "mapped" profile: one sourced link per GPU, every port mapped."""
    rack = next(r for r in doc["spec"]["racks"] if r["name"] == "nvl-a")
    rack["nvlink"].update(
        correlated=True,
        linksPerGpu=1,
        linkCountSource=SRC,
        portMappings=[
            {"tray": t, "switch": s, "port": p, "vendorId": str(p), "source": SRC}
            for t in range(9) for s in range(2) for p in range(72)
        ],
        links=[
            {"gpu": f"gpu:nvl-node-{n:04d}/{slot}", "gpuLinkIndex": 0, "tray": n // 2,
             "switch": 0, "port": (n % 2) * 4 + slot, "source": SRC}
            for n in range(18) for slot in range(4)
        ],
    )  # fmt: skip


def test_mapped_nvl72_domain_is_correlated_with_one_edge_per_gpu() -> None:
    doc = builtin_doc("ai-factory")
    _mapped_nvl72(doc)
    topo = build_doc(doc)
    domain = "domain:site-a/nvl-a/domain-a"
    assert topo.edges_reached(domain).size == 72
    assert topo.edges_reached("tray:site-a/nvl-a/nvswitch/0").size == 8
    assert topo.edges_reached("nvport:site-a/nvl-a/domain-a/0/0/5").size == 1
    assert topo.gpus_reached("nvswitch:site-a/nvl-a/domain-a/0/0").tolist() == [
        topo.gpu_index[f"gpu:nvl-node-000{n}/{s}"] for n in (0, 1) for s in range(4)
    ]


def test_each_hgx_gpu_has_18_links(factory: Topology) -> None:
    counts = np.diff(factory.gpu_edge_start)
    hgx = factory.gpu_domain >= 0
    hgx &= np.array(
        [factory.domains[d].kind == "hgx" if d >= 0 else False for d in factory.gpu_domain]
    )
    assert set(counts[hgx].tolist()) == {18}
    assert factory.edge_count == 2 * 144


def test_swapping_module_ids_moves_the_links_not_the_gpu() -> None:
    doc = builtin_doc("hgx-fixture")
    gpus = doc["spec"]["pools"][0]["gpus"]
    gpus[0]["hgxModuleId"], gpus[1]["hgxModuleId"] = 1, 0
    topo = build_doc(doc)
    plain = build_doc(builtin_doc("hgx-fixture"))
    edge = topo.gpu_edges(0)[2]
    assert topo.edge_key(int(edge)) == "nvlink:hgx-node-0000/0/2"
    assert topo.edge_port_key(int(edge)) == "nvport:site-a/hgx-a/hgx/hgx-node-0000/baseboard/1/2"
    assert plain.edge_port_key(int(plain.gpu_edges(0)[2])) == (
        "nvport:site-a/hgx-a/hgx/hgx-node-0000/baseboard/0/40"
    )
    assert topo.gpu_uuids == plain.gpu_uuids and topo.gpu_module[:2].tolist() == [1, 0]


def test_burst_reach_counts_on_an_hgx_node() -> None:
    doc = builtin_doc("hgx-fixture")
    node = doc["spec"]["pools"][0]["nodes"][0]
    node["nvlink"]["partitions"] = [
        {"name": "left", "gpus": [f"gpu:hgx-node-0000/{s}" for s in range(4)]},
        {"name": "right", "gpus": [f"gpu:hgx-node-0000/{s}" for s in range(4, 8)]},
    ]
    topo = build_doc(doc)
    stem = "site-a/hgx-a/hgx/hgx-node-0000/baseboard"
    assert topo.edges_reached("gpu:hgx-node-0000/3").size == 18
    assert topo.edges_reached(f"domain:{stem}").size == 144
    assert topo.edges_reached(f"partition:{stem}/left").size == 72
    assert topo.edges_reached(f"nvswitch:{stem}/0").size == 32
    assert topo.edges_reached(f"nvswitch:{stem}/1").size == 40
    assert topo.edges_reached(f"nvport:{stem}/0/40").size == 1
    assert topo.edges_reached("node:hgx-node-0000").size == 144
    # A domain burst and a GPU burst overlap on exactly that GPU's 18 edges.
    union = np.union1d(
        topo.edges_reached(f"domain:{stem}"), topo.edges_reached("gpu:hgx-node-0000/0")
    )
    assert union.size == 144


def test_hgx_faults_stay_inside_their_node(factory: Topology) -> None:
    stem = "site-a/hgx-a/hgx/hgx-node-0001/baseboard"
    node = factory.node_index["hgx-node-0001"]
    for key in (
        f"domain:{stem}",
        f"nvswitch:{stem}/2",
        f"nvport:{stem}/1/0",
        "gpu:hgx-node-0001/5",
    ):
        edges = factory.edges_reached(key)
        assert edges.size and set(factory.gpu_node[factory.edge_gpu[edges]].tolist()) == {node}
    # ...while the rack reaches both HGX nodes.
    assert factory.gpus_reached("rack:site-a/hgx-a").size == 16
    assert factory.edges_reached("rack:site-a/hgx-a").size == 288


def test_two_hgx_domains_have_their_own_switches(factory: Topology) -> None:
    hgx = [d for d in factory.domains if d.kind == "hgx"]
    assert len(hgx) == 2
    assert [len(d.switches) for d in hgx] == [4, 4]
    assert not set(hgx[0].switches) & set(hgx[1].switches)
    assert factory.nvswitches[hgx[0].switches[0]].name == "hgx-node-0001-nvsw-0"
    assert hgx[0].node == factory.node_index["hgx-node-0001"] and hgx[0].correlated
