"""§2.3/§3.2 iterations on the API stand-in: a category's repeatCount runs every iteration as
its own Jobs, the status follows them (currentIteration, completedIterations, the finished
iterations in iterationHistory, IterationCompleted between them), and a node that passed the
first iteration but failed a later one is named."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from glimmer.certify.attribution import (
    FAILED_KEY,
    SUCCEEDED_KEY,
    read_failed_nodes,
    read_succeeded_nodes,
)
from glimmer.certify.result import category_from_doc
from tests.operator.certify.conftest import (
    Controllers,
    Outcome,
    condition,
    run_workflow,
)
from tests.operator.certify.workflow_harness import level1_workflow
from tools.k8s_standin.journal import read

WF = "w-diagnostics-dcgm-level1"


def _started(ctl: Controllers, repeat: int) -> None:
    level1_workflow(ctl, 3, cert="w", repeatCount=repeat)
    wf = ctl.api.get("workflows", WF)
    assert wf is not None and wf["spec"]["orchestration"]["iterations"] == repeat


def _fails_gpu02_second_time(ctl: Controllers) -> Outcome:
    """gpu-02's second Job (iteration 2: Job names are cut, so counted) fails its health
    check; every other Job passes."""

    def outcome(job: Mapping[str, Any]) -> Mapping[str, Any]:
        group = "certify.glimmer.ai/group=gpu-02"
        earlier = [
            j for j in ctl.api.items("jobs", group) if (j.get("status") or {}).get("outcome")
        ]
        if job["metadata"]["labels"]["certify.glimmer.ai/group"] == "gpu-02" and earlier:
            return {"exit_code": 1, "error": "GPU fell off the bus", "hardware_failed": ["gpu-02"]}
        return {}

    return outcome


def _node_results(ctl: Controllers, wf: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    failed = ctl.api.configmap(wf["status"]["failedNodesRef"]["name"])
    ok = ctl.api.configmap(wf["status"]["succeededNodesRef"]["name"])
    assert failed is not None and ok is not None
    bad = read_failed_nodes(base64.b64decode(failed["binaryData"][FAILED_KEY]))
    good = read_succeeded_nodes(base64.b64decode(ok["binaryData"][SUCCEEDED_KEY]))
    return [f"{f.name}:{f.reason}" for f in bad], list(good)


def test_a_node_that_fails_the_second_iteration_is_named_though_the_first_passed(
    controllers: Controllers,
) -> None:
    _started(controllers, 2)
    wf = run_workflow(controllers, WF, _fails_gpu02_second_time(controllers))
    failed = condition(wf, "Failed")
    assert failed is not None and failed["status"] == "True", wf["status"]
    assert failed["reason"] == "JobHardwareFailed"
    assert failed["message"].startswith(
        "1 groups failed across 2 iterations; hardware failures occurred on one or more nodes"
    )
    orch = wf["status"]["orchestration"]
    assert (orch["currentIteration"], orch["completedIterations"]) == (2, 2)
    (first,) = orch["iterationHistory"]
    assert first["iteration"] == 1
    assert sorted((g["name"], g["phase"]) for g in first["groups"]) == [
        ("gpu-01", "Succeeded"), ("gpu-02", "Succeeded"), ("gpu-03", "Succeeded"),
    ]  # fmt: skip
    first_jobs = {g["jobName"] for g in first["groups"]}
    # The final iteration stays in groups.
    assert sorted((g["name"], g["phase"]) for g in orch["groups"]) == [
        ("gpu-01", "Succeeded"), ("gpu-02", "Failed"), ("gpu-03", "Succeeded"),
    ]  # fmt: skip
    assert first_jobs.isdisjoint(g["jobRef"] for g in orch["groups"])
    assert _node_results(controllers, wf) == (
        ["gpu-02:HardwareFailureDetected"],
        ["gpu-01", "gpu-03"],
    )
    result = controllers.api.configmap(f"{WF}-result")
    assert result is not None
    cat = category_from_doc(json.loads(result["data"]["category.json"]))
    assert [(i.number, i.status) for i in cat.iterations] == [(1, "Succeeded"), (2, "Failed")]
    assert [f.name for f in cat.failed_nodes] == ["gpu-02"]
    reasons = [e["reason"] for e in controllers.api.events() if e["involvedObject"]["name"] == WF]
    assert "IterationCompleted" in reasons
    posts = [
        e["path"]
        for e in read(controllers.api.root / "journal.jsonl")
        if e["method"] == "POST" and e["path"].endswith("/jobs") and e["status"] == 201
    ]
    assert len(posts) == 6  # three nodes, two iterations, each Job created once


def test_every_iteration_passing_says_so_with_their_number(controllers: Controllers) -> None:
    _started(controllers, 3)
    seen: list[tuple[int, int]] = []

    def watching(job: Mapping[str, Any]) -> Mapping[str, Any]:
        live = controllers.api.get("workflows", WF)
        assert live is not None
        orch = live["status"]["orchestration"]
        seen.append((orch["currentIteration"], orch["completedIterations"]))
        return {}

    wf = run_workflow(controllers, WF, watching)
    done = condition(wf, "Succeeded")
    assert done is not None and done["status"] == "True"
    assert (done["reason"], done["message"]) == (
        "JobCompleted",
        "All 3 iterations completed successfully",
    )
    assert sorted(set(seen)) == [(1, 0), (2, 1), (3, 2)]
    orch = wf["status"]["orchestration"]
    assert [h["iteration"] for h in orch["iterationHistory"]] == [1, 2]
    assert len(controllers.api.items("jobs")) == 9
