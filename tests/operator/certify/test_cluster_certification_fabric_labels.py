"""A Node whose declared fabric (certify/fabric.py's labels) is not a number fails the
Workflow of a network category, naming the Node and the label, instead of a reconcile that
fails over and over (or a group judged against no expectation)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from glimmer.certify.fabric import fabric_labels
from glimmer.certify.grouping import BACKEND_GBPS_LABEL
from tests.operator.certify.conftest import (
    Controllers,
    add_nodes,
    certification,
    condition,
    gpu_node,
    run_certification,
)

ALL_REDUCE = [{"domain": "communication", "variant": "nccl-all-reduce"}]
# A real nccl-tests log: the group's figures are read, then judged against its expectation.
LOG = (
    Path(__file__).parents[2] / "fixtures" / "nccl" / "all_reduce_8xh100_kubelet.log"
).read_text()


def _measured(_job: Any) -> dict[str, Any]:
    return {"text": LOG}


def test_an_unreadable_fabric_label_fails_the_workflow_naming_node_and_label(
    controllers: Controllers,
) -> None:
    api = controllers.api
    declared = fabric_labels(8, 400.0)
    add_nodes(
        api,
        [
            gpu_node("gpu-01", labels=declared),
            gpu_node("gpu-02", labels={**declared, BACKEND_GBPS_LABEL: "fast"}),
        ],
    )
    api.create("certifications", certification("fabric", ALL_REDUCE))
    run_certification(controllers, "fabric", _measured)
    [workflow] = api.items("workflows")
    failed = condition(workflow, "Failed")
    assert failed is not None and failed["status"] == "True", workflow["status"]
    assert failed["reason"] == "InvalidInput"
    assert failed["message"] == (
        "Node/gpu-02, field metadata.labels[topology.glimmer.ai/backend-gbps]: label "
        "topology.glimmer.ai/backend-gbps is 'fast', not a port speed in Gb/s above 0"
    )


def _run_all_reduce(controllers: Controllers, labels: dict[str, str]) -> dict[str, Any]:
    add_nodes(controllers.api, [gpu_node(f"gpu-0{i}", labels=labels) for i in (1, 2)])
    controllers.api.create("certifications", certification("fabric", ALL_REDUCE))
    run_certification(controllers, "fabric", _measured)
    [workflow] = controllers.api.items("workflows")
    result = controllers.api.configmap(f"{workflow['metadata']['name']}-result")
    assert result is not None
    doc: dict[str, Any] = json.loads(result["data"]["category.json"])
    return doc


def test_the_declared_fabric_is_what_a_group_without_thresholds_is_judged_against(
    controllers: Controllers,
) -> None:
    # 16 rails of 800 Gb/s should carry 1,497.6 GB/s: the log's ~180 GB/s is far below.
    doc = _run_all_reduce(controllers, fabric_labels(16, 800.0))
    assert doc["status"] == "Failed"
    assert "busbw 485.03 GB/s < floor 1347.84 GB/s (0.9 x 1497.6 expected" in json.dumps(doc)


def test_nodes_that_declare_no_fabric_leave_a_network_group_without_expectation(
    controllers: Controllers,
) -> None:
    doc = _run_all_reduce(controllers, {})
    assert doc["status"] == "Succeeded"
    assert "expected;" not in json.dumps(doc)
