"""Certification on the simulated fleet: categories over groups, verdicts, isolation of planted
faults, and the result document both ways."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.backends.sim.certify import certify
from glimmer.certify.grouping import PRODUCT_LABEL, NodeInfo
from glimmer.certify.report_card import render
from glimmer.certify.result import from_doc, to_doc
from glimmer.certify.spec import CertSpec, from_text
from glimmer.certify.target import majority_arch
from glimmer.errors import InputError, InputErrors
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

TOPO = load_topology("ai-factory")
NVL = [n.hostname for n in TOPO.nodes if n.hostname.startswith("nvl-")]


def _doc(
    categories: list[dict[str, Any]], target: dict[str, Any] | None = None, **extra: Any
) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "certify.glimmer.ai/v1alpha1",
            "kind": "Certification",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"target": target or {}, "categories": categories, **extra},
        }
    )


def _spec(categories: list[dict[str, Any]], target: dict[str, Any] | None = None) -> CertSpec:
    return from_text(_doc(categories, target))


ALL_REDUCE = {"domain": "communication", "variant": "nccl-all-reduce"}


@given(
    st.sets(st.sampled_from(NVL), min_size=1, max_size=3),
    st.sampled_from(["diagnose", "full-scale"]),
)
@settings(max_examples=12, deadline=None)
def test_every_planted_nic_fault_is_named_and_no_healthy_node(bad: set[str], scale: str) -> None:
    faults = [Fault("nic_degraded", f"nic:{n}/eth{1 + i % 4}") for i, n in enumerate(sorted(bad))]
    opts = {"testScale": scale, "enableMNNVL": scale == "diagnose"}
    r = certify(FleetSim(TOPO, faults), _spec([{**ALL_REDUCE, "options": opts}]))
    cat = r.categories[0]
    assert set(r.failed_nodes) == bad and cat.status == "Failed"
    assert all("busbw" in f.message and f.reason == "WorkloadFailed" for f in cat.failed_nodes)
    assert cat.isolation is not None and cat.isolation.rounds > 0


def test_healthy_rack_passes_every_scale() -> None:
    cats = [
        {**ALL_REDUCE, "options": {"testScale": s}}
        for s in ("intra-node", "intra-rack", "full-scale", "diagnose")
    ]
    r = certify(FleetSim(TOPO), _spec(cats, {"nodeSelector": {PRODUCT_LABEL: "NVIDIA-GB200"}}))
    assert r.result == "PASSED" and r.failed_nodes == []
    assert [len(c.groups) for c in r.categories] == [18, 1, 1, 0]
    assert r.categories[3].isolation is not None
    assert r.categories[3].isolation.message == "All domains healthy, no faults detected"


def test_intra_node_nvlink_fault_fails_its_node_by_threshold() -> None:
    board = next(d.key for d in TOPO.domains if d.kind == "hgx" and "hgx-node-0002" in d.key)
    twin = FleetSim(TOPO, [Fault("gpu_nvlink_degraded", board)])
    r = certify(
        twin,
        _spec(
            [{**ALL_REDUCE, "options": {"testScale": "intra-node"}}],
            {"nodeSelector": {PRODUCT_LABEL: "NVIDIA-H100-80GB-HBM3"}},
        ),
    )
    (f,) = r.categories[0].failed_nodes
    assert (f.name, f.reason) == ("hgx-node-0002", "ThresholdViolation")
    assert "< floor 432.00 GB/s" in f.message and r.categories[0].isolation is None


def test_a_certifications_own_threshold_wins() -> None:
    target = {"nodeNames": ["hgx-node-0001", "hgx-node-0002"]}
    opts = {"enableMNNVL": False, "thresholds": {"busBandwidthGBps": "value >= 150"}}
    ok = certify(FleetSim(TOPO), _spec([{**ALL_REDUCE, "options": opts}], target))
    assert ok.result == "PASSED" and ok.categories[0].groups[0].expected == pytest.approx(187.2)
    opts["thresholds"] = {"busBandwidthGBps": "value >= 400"}
    bad = certify(FleetSim(TOPO), _spec([{**ALL_REDUCE, "options": opts}], target))
    assert 'Threshold "busBandwidthGBps" violated' in bad.categories[0].groups[0].reason


def test_dcgm_and_training_categories() -> None:
    twin = FleetSim(
        TOPO,
        [
            Fault("gpu_row_remap", "gpu:nvl-node-0005/1"),
            Fault("gpu_xid_burst", "gpu:nvl-node-0009/2"),
        ],
    )
    r = certify(
        twin,
        _spec(
            [
                {"domain": "diagnostics", "variant": "dcgm-level2"},
                {"domain": "training", "variant": "nemotron5-8b"},
            ],
            {"nodeSelector": {PRODUCT_LABEL: "NVIDIA-GB200"}},
        ),
    )
    dcgm, train = r.categories
    assert [f.name for f in dcgm.failed_nodes] == ["nvl-node-0005"]
    assert [f.name for f in train.failed_nodes] == ["nvl-node-0009"]
    assert "died at step" in train.failed_nodes[0].message


def test_same_seed_same_result_and_json_round_trip() -> None:
    twin = FleetSim(TOPO, [Fault("nic_degraded", "nic:nvl-node-0003/eth2")])
    spec = _spec([{**ALL_REDUCE, "options": {"testScale": "diagnose"}}])
    a, b = certify(twin, spec, seed=7), certify(twin, spec, seed=7)
    assert to_doc(a) == to_doc(b)
    doc = json.loads(json.dumps(to_doc(a)))
    back = from_doc(doc)
    assert to_doc(back) == doc and render(back) == render(a)
    with pytest.raises(InputError, match="not a saved certification result"):
        from_doc({"name": "x"}, "r.json")


def test_majority_architecture_tie_keeps_the_earliest_node() -> None:
    nodes = [
        NodeInfo("a", {PRODUCT_LABEL: "NVIDIA-H100-80GB-HBM3"}),
        NodeInfo("b", {PRODUCT_LABEL: "NVIDIA-GB200"}),
        NodeInfo("c", {}),
        NodeInfo("d", {PRODUCT_LABEL: "NVIDIA-GB200"}),
        NodeInfo("e", {PRODUCT_LABEL: "NVIDIA-H100-PCIe"}),  # same architecture as a
    ]
    assert majority_arch(nodes) == "h100" and majority_arch([NodeInfo("c")]) == ""
    assert majority_arch(nodes[1:4]) == "gb200"


def test_no_matching_node_is_bad_input() -> None:
    with pytest.raises(InputError, match="no node of fleet"):
        certify(FleetSim(TOPO), _spec([ALL_REDUCE], {"nodeNames": ["nope"]}))


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        (
            {"categories": [{"domain": "communication", "variant": "nccl-everything"}]},
            "not in the catalog",
        ),
        (
            {"categories": [{**ALL_REDUCE, "options": {"thresholds": {"zeta": "value > 1"}}}]},
            "unknown threshold key 'zeta'",
        ),
        ({"categories": [{**ALL_REDUCE, "options": {"nodesPerJob": 0}}]}, "nodesPerJob"),
        ({"categories": [ALL_REDUCE], "maxBytes": "12X"}, "maxBytes"),
    ],
)
def test_spec_errors_name_the_field(doc: dict[str, Any], needle: str) -> None:
    cats = doc.pop("categories")
    with pytest.raises((InputError, InputErrors)) as e:
        from_text(_doc(cats, **doc), "c.yaml")
    assert needle in str(e.value) and "c.yaml" in str(e.value)


def test_a_healthy_thousand_node_fabric_clears_its_floor() -> None:
    big = load_topology("hgx-1k")
    r = certify(FleetSim(big), _spec([ALL_REDUCE]))
    (group,) = r.categories[0].groups
    assert r.result == "PASSED" and len(group.nodes) == 1024
    assert group.measured is not None and group.floor is not None
    assert group.measured > group.floor * 1.03  # margin for the noise of any seed
