"""A ``nodeNames`` entry no Node has is refused on a cluster as the simulator refuses it
(certify/target.py): the Certification's category fails at once with NodeDiscoveryError
naming the unknown names (never waits five minutes for them, never certifies the rest without
a word), and a Workflow written by hand fails the same way."""

from __future__ import annotations

import json
from typing import Any

from tests.operator.certify.conftest import (
    Controllers,
    add_nodes,
    certification,
    condition,
    h100_nodes,
    run_certification,
    run_workflow,
)
from tests.operator.certify.workflow_harness import hand_written

LEVEL1 = {"domain": "diagnostics", "variant": "dcgm-level1"}
MISSPELT = {"nodeNames": ["gpu-01", "gpu-9", "gpu-02", "gpu-O3"]}


def test_a_certification_naming_an_unknown_node_fails_its_category_naming_it(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(3))
    api.create("certifications", certification("u", [LEVEL1], MISSPELT))
    body = run_certification(controllers, "u")
    failed = condition(body, "Failed")
    assert failed is not None and failed["status"] == "True", body["status"]
    assert body["status"]["categoryStatuses"][0]["status"] == "Failed"
    assert api.items("workflows") == [] and api.items("jobs") == []
    warned = [e for e in api.events() if e["reason"] == "NodeDiscoveryError"]
    assert len(warned) == 1 and warned[0]["type"] == "Warning"
    assert "'gpu-9', 'gpu-O3'" in warned[0]["message"]
    report = api.configmap("u-report")
    assert report is not None
    doc = json.loads(report["data"]["result.json"])
    (cat,) = doc["categories"]
    assert cat["status"] == "Failed"
    assert cat["failureReason"].startswith("diagnostics/dcgm-level1: no node of the cluster is ")
    assert "'gpu-9', 'gpu-O3'" in cat["failureReason"] and "gpu-01" not in cat["failureReason"]


def test_a_workflow_naming_an_unknown_node_fails_with_node_discovery_error(
    controllers: Controllers,
) -> None:
    api = controllers.api

    def unknown_target(spec: dict[str, Any]) -> None:
        spec["orchestration"]["target"] = {"nodeNames": ["gpu-02", "gpu-07"]}

    hand_written(controllers, "named", unknown_target)
    wf = run_workflow(controllers, "named")
    failed = condition(wf, "Failed")
    assert failed is not None and failed["reason"] == "NodeDiscoveryError"
    assert "'gpu-07'" in failed["message"] and "'gpu-02'" not in failed["message"]
    assert api.items("jobs", "certify.glimmer.ai/workflow=named") == []
