"""Scenario 32 (specs/certify.md §9.2): a Certification's categories run one after another, each
as a Workflow it owns; every category runs even after one failed; the report is the core's."""

from __future__ import annotations

import json
from typing import Any

from tests.operator.certify.conftest import (
    Controllers,
    add_nodes,
    certification,
    condition,
    h100_nodes,
    is_true,
    run_certification,
    run_workflow,
)

DCGM = [
    {"domain": "diagnostics", "variant": "dcgm-level1"},
    {"domain": "diagnostics", "variant": "dcgm-level2"},
]


def _statuses(body: dict[str, Any]) -> list[str]:
    return [c["status"] for c in body["status"]["categoryStatuses"]]


def test_certification_sequential_create_makes_only_the_first_workflow(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    api.create("certifications", certification("seq", DCGM))
    controllers.certification.reconcile("default", "seq")
    body = api.get("certifications", "seq")
    assert body is not None
    assert _statuses(body) == ["InProgress", "Pending"]
    [wf] = api.items("workflows")
    assert wf["metadata"]["name"] == "seq-diagnostics-dcgm-level1"
    labels = wf["metadata"]["labels"]
    assert labels["certify.glimmer.ai/certification"] == "seq"
    assert labels["certify.glimmer.ai/category-domain"] == "diagnostics"
    assert labels["certify.glimmer.ai/category-variant"] == "dcgm-level1"
    [owner] = wf["metadata"]["ownerReferences"]
    assert owner["uid"] == body["metadata"]["uid"] and owner["controller"] is True
    category = json.loads(wf["metadata"]["annotations"]["certify.glimmer.ai/category"])
    assert (category["domain"], category["variant"]) == ("diagnostics", "dcgm-level1")
    assert "certify.glimmer.ai/certification-finalizer" in body["metadata"]["finalizers"]
    progress = condition(body, "InProgress")
    assert progress is not None and progress["reason"] == "WorkflowCreated"
    assert progress["message"].endswith("(1 of 2)")


def test_certification_progress_creates_the_next_workflow_when_one_finishes(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    api.create("certifications", certification("prog", DCGM))
    controllers.certification.reconcile("default", "prog")
    run_workflow(controllers, "prog-diagnostics-dcgm-level1")
    controllers.certification.reconcile("default", "prog")
    body = api.get("certifications", "prog")
    assert body is not None
    assert _statuses(body) == ["Succeeded", "InProgress"]
    names = sorted(w["metadata"]["name"] for w in api.items("workflows"))
    assert names == ["prog-diagnostics-dcgm-level1", "prog-diagnostics-dcgm-level2"]
    progress = condition(body, "InProgress")
    assert progress is not None and progress["message"].endswith("(2 of 2)")


def test_certification_all_succeed_writes_succeeded_and_the_report(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(3))
    api.create("certifications", certification("ok", DCGM))
    body = run_certification(controllers, "ok")
    assert is_true(body, "Succeeded")
    done = condition(body, "Succeeded")
    assert done is not None and done["reason"] == "AllWorkflowsSucceeded"
    assert _statuses(body) == ["Succeeded", "Succeeded"]
    for cat in body["status"]["categoryStatuses"]:
        assert cat["succeededNodesRef"]["name"].startswith("succeeded-nodes-")
    report = api.configmap("ok-report")
    assert report is not None
    doc = json.loads(report["data"]["result.json"])
    assert doc["result"] == "PASSED"
    assert [c["variant"] for c in doc["categories"]] == ["dcgm-level1", "dcgm-level2"]
    assert doc["totalNodes"] == 3 and doc["gpu"] == "h100" and doc["platform"] == "onprem"


def test_certification_fail_continue_runs_the_second_category_after_the_first_failed(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(3))
    api.create("certifications", certification("cont", DCGM))

    def gpu02_fails_level1(job: dict[str, Any]) -> dict[str, Any]:
        nodes = job["metadata"]["annotations"]["certify.glimmer.ai/group-nodes"]
        level1 = job["metadata"]["labels"]["certify.glimmer.ai/workflow"].endswith("level1")
        if nodes == "gpu-02" and level1:
            return {"exit_code": 1, "text": "FAIL: 1 subtest(s) failed: Memory"}
        return {}

    body = run_certification(controllers, "cont", gpu02_fails_level1)
    assert _statuses(body) == ["Failed", "Succeeded"]
    failed = condition(body, "Failed")
    assert failed is not None and failed["status"] == "True"
    assert failed["reason"] == "WorkflowFailed"
    report = api.configmap("cont-report")
    assert report is not None
    doc = json.loads(report["data"]["result.json"])
    assert doc["result"] == "FAILED"
    assert doc["failedNodes"] == ["gpu-02"]
    level1, level2 = doc["categories"]
    assert level1["status"] == "Failed" and level2["status"] == "Succeeded"
    assert [f["name"] for f in level1["failedNodeReasons"]] == ["gpu-02"]
    assert "Memory" in level1["failedNodeReasons"][0]["message"]
