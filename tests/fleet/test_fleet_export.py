"""JSON and Graphviz exports of a topology."""

from __future__ import annotations

import json

from glimmer.fleet.export import summary, to_dot, to_json
from glimmer.fleet.topology import Topology


def test_json_export_lists_everything_in_key_order(factory: Topology) -> None:
    doc = to_json(factory)
    assert doc["summary"]["gpus"] == 96 and doc["summary"]["nvlinkEdges"] == 288
    assert [n["key"] for n in doc["nodes"]] == sorted(n["key"] for n in doc["nodes"])
    hgx = next(n for n in doc["nodes"] if n["hostname"] == "hgx-node-0001")
    assert hgx["gpus"][0]["hgxModuleId"] == 0
    assert hgx["gpus"][0]["domain"] == "domain:site-a/hgx-a/hgx/hgx-node-0001/baseboard"
    assert len(doc["nvlinkEdges"]) == 288
    assert doc["nvlinkEdges"][2] == {
        "key": "nvlink:hgx-node-0001/0/2",
        "port": "nvport:site-a/hgx-a/hgx/hgx-node-0001/baseboard/0/40",
    }
    json.dumps(doc)  # plain data only
    assert "nvlinkEdges" not in to_json(factory, edges=False)


def test_summary_counts_models(factory: Topology) -> None:
    assert summary(factory)["models"] == {
        "h100_sxm_80gb": 16,
        "h100_pcie_80gb": 8,
        "gb200_186gb": 72,
    }


def test_dot_export_is_a_graph_of_racks_nodes_and_switches(factory: Topology) -> None:
    dot = to_dot(factory)
    assert dot.startswith('graph "ai-factory" {') and dot.rstrip().endswith("}")
    assert 'subgraph "cluster_rack:site-a/hgx-a"' in dot
    assert '"node:hgx-node-0001" -- "switch:backend-a/backend-leaf-0"' in dot
    assert '"switch:backend-a/backend-leaf-0" -- "switch:backend-a/backend-spine-a"' in dot
    assert "nvswitch" not in dot


def test_dot_export_with_gpus_draws_nvlinks(factory: Topology) -> None:
    dot = to_dot(factory, gpus=True)
    # module 0 has 4 links to switch 0 (the 4/5/5/4 split)
    assert (
        '"gpu:hgx-node-0001/0" -- "nvswitch:site-a/hgx-a/hgx/hgx-node-0001/baseboard/0" [label="4"]'
        in dot
    )
