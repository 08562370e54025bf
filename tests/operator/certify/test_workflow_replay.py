"""Scenario 39 (specs/certify.md §9.2) and §3.2/§3.4: a Workflow discovers its nodes once, runs
its category's core in replay — one Job per core job, pinned to its group, created once however
often the core is replayed — and ends with the node results and the category's result."""

from __future__ import annotations

import base64
import json
from typing import Any

from glimmer.certify.attribution import (
    FAILED_KEY,
    SUCCEEDED_KEY,
    read_failed_nodes,
    read_succeeded_nodes,
)
from glimmer.certify.result import category_from_doc
from tests.operator.certify.conftest import (
    NS,
    Controllers,
    add_nodes,
    certification,
    condition,
    finish_open_jobs,
    gpu_node,
    h100_nodes,
    is_true,
    run_workflow,
)
from tools.k8s_standin.journal import read

LEVEL1 = {"domain": "diagnostics", "variant": "dcgm-level1"}
WF = "w-diagnostics-dcgm-level1"


def _started(ctl: Controllers, categories: list[dict[str, Any]] | None = None) -> str:
    """A Certification's first Workflow, created (not reconciled yet)."""
    ctl.api.create("certifications", certification("w", categories or [LEVEL1]))
    ctl.certification.reconcile(NS, "w")
    return WF


def _affinity_nodes(job: dict[str, Any]) -> list[str]:
    patches = job["spec"]["workload"]["trainJob"]["runtimePatches"]
    text = json.dumps(patches)
    found: list[str] = []
    for patch in patches:
        for rj in patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"]:
            pod = rj["template"]["spec"]["template"]["spec"]
            terms = pod.get("affinity", {}).get("nodeAffinity", {})
            required = terms.get("requiredDuringSchedulingIgnoredDuringExecution", {})
            for term in required.get("nodeSelectorTerms", []):
                for expr in term["matchExpressions"]:
                    if expr["key"] == "kubernetes.io/hostname":
                        found += expr["values"]
    assert found, text
    return sorted(set(found))


def test_workflow_discovers_once_then_makes_one_pinned_job_per_node(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(3))
    name = _started(controllers)
    controllers.workflow.reconcile(NS, name)
    wf = api.get("workflows", name)
    assert (
        wf is not None and "certify.glimmer.ai/workflow-finalizer" in wf["metadata"]["finalizers"]
    )
    orch = wf["status"]["orchestration"]
    assert orch["totalNodes"] == 3
    assert (orch["detectedPlatform"], orch["detectedGPUArchitecture"]) == ("onprem", "h100")
    assert condition(wf, "InProgress")["reason"] == "GroupsPartitioned"  # type: ignore[index]
    kept = api.configmap(wf["status"]["groupNodesRef"]["name"])
    assert kept is not None
    assert [n["name"] for n in json.loads(kept["data"]["target.json"])["nodes"]] == [
        "gpu-01",
        "gpu-02",
        "gpu-03",
    ]
    assert api.items("jobs") == []  # discovery is its own reconcile
    controllers.workflow.reconcile(NS, name)
    jobs = api.items("jobs")
    assert len(jobs) == 3
    uid = wf["metadata"]["uid"]
    for job in sorted(
        jobs, key=lambda j: j["metadata"]["annotations"]["certify.glimmer.ai/group-nodes"]
    ):
        meta = job["metadata"]
        node = meta["annotations"]["certify.glimmer.ai/group-nodes"]
        assert meta["labels"]["certify.glimmer.ai/workflow"] == name
        assert meta["labels"]["certify.glimmer.ai/group"] == node
        assert meta["ownerReferences"][0]["uid"] == uid
        assert _affinity_nodes(job) == [node]
        assert job["spec"]["workload"]["trainJob"]["trainer"]["numNodes"] == 1
    # Replayed again and again: the same Jobs, none twice.
    for _ in range(3):
        controllers.workflow.reconcile(NS, name)
    assert sorted(j["metadata"]["uid"] for j in api.items("jobs")) == sorted(
        j["metadata"]["uid"] for j in jobs
    )
    posts = [e for e in read(api.root / "journal.jsonl") if e["method"] == "POST"]
    assert len([e for e in posts if e["path"].endswith("/jobs") and e["status"] == 201]) == 3


def test_workflow_with_dependencies_creates_them_before_jobs_and_deletes_them_after(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    name = _started(controllers)
    run_workflow(controllers, name)
    wf = api.get("workflows", name)
    assert wf is not None
    refs = wf["status"]["dependencyRefs"]
    assert refs and {r["kind"] for r in refs} == {"TrainingRuntime"}
    assert {r["scope"] for r in refs} == {"job"}  # the runtime the job spec names is copied
    runtimes = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainingruntimes"
    for ref in refs:
        got = api.http.get(f"{runtimes}/{ref['name']}").json()
        assert (
            got["metadata"]["annotations"]["certify.glimmer.ai/workflow-uid"]
            == (wf["metadata"]["uid"])
        )
        assert got["metadata"]["labels"]["certify.glimmer.ai/workflow"] == name
    journal = read(api.root / "journal.jsonl")
    first_runtime = min(
        i
        for i, e in enumerate(journal)
        if e["method"] == "POST" and "trainingruntimes" in e["path"]
    )
    first_job = min(
        i for i, e in enumerate(journal) if e["method"] == "POST" and e["path"].endswith("/jobs")
    )
    assert first_runtime < first_job
    # Deletion (ADR-053): the Jobs first, then the dependencies, then the finalizer.
    start = len(journal)
    assert api.http.delete(api.path("workflows", name)).status_code == 200
    for _ in range(5):
        if controllers.workflow.reconcile(NS, name) is None:
            break
    assert api.get("workflows", name) is None
    assert api.items("jobs") == []
    assert api.http.get(runtimes).json()["items"] == []
    deletes = [
        e["path"] for e in read(api.root / "journal.jsonl")[start:] if e["method"] == "DELETE"
    ]
    kinds = [p.split("/")[-2] for p in deletes]
    assert "jobs" in kinds and "trainingruntimes" in kinds
    assert max(i for i, k in enumerate(kinds) if k == "jobs") < min(
        i for i, k in enumerate(kinds) if k == "trainingruntimes"
    )


def _binary(api: Any, name: str, key: str) -> bytes:
    found = api.configmap(name)
    assert found is not None
    return base64.b64decode(found["binaryData"][key])


def test_workflow_node_results_list_exactly_the_failed_and_the_succeeded_nodes(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(4))
    name = _started(controllers)

    def outcome(job: dict[str, Any]) -> dict[str, Any]:
        node = job["metadata"]["annotations"]["certify.glimmer.ai/group-nodes"]
        if node == "gpu-03":
            return {"exit_code": 1, "text": "FAIL: 1 subtest(s) failed: PCIe"}
        if node == "gpu-04":
            return {"hardware_failed": ["gpu-04"]}
        return {}

    wf = run_workflow(controllers, name, outcome)
    failed = condition(wf, "Failed")
    assert failed is not None and failed["status"] == "True"
    assert failed["reason"] == "JobHardwareFailed"
    assert "hardware failures occurred" in failed["message"]
    status = wf["status"]
    named = read_failed_nodes(_binary(api, status["failedNodesRef"]["name"], FAILED_KEY))
    assert sorted((f.name, f.reason) for f in named) == [
        ("gpu-03", "WorkloadFailed"),
        ("gpu-04", "HardwareFailureDetected"),
    ]
    healthy = read_succeeded_nodes(_binary(api, status["succeededNodesRef"]["name"], SUCCEEDED_KEY))
    assert healthy == ["gpu-01", "gpu-02"]
    result = api.configmap(f"{name}-result")
    assert result is not None
    category = category_from_doc(json.loads(result["data"]["category.json"]))
    assert category.status == "Failed"
    assert {f.name for f in category.failed_nodes} == {"gpu-03", "gpu-04"}


def test_workflow_validation_failed_marks_the_workflow_and_names_the_reason(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    name = _started(controllers)

    def invalid(job: dict[str, Any]) -> dict[str, Any]:
        node = job["metadata"]["annotations"]["certify.glimmer.ai/group-nodes"]
        return {"validation_failed": node == "gpu-01", "exit_code": 1 if node == "gpu-01" else 0}

    wf = run_workflow(controllers, name, invalid)
    failed = condition(wf, "Failed")
    assert failed is not None and failed["reason"] == "JobValidationFailed"
    vf = condition(wf, "ValidationFailed")
    assert vf is not None and vf["status"] == "True" and vf["reason"] == "JobValidationFailed"


def test_workflow_standalone_unresolved_render_still_enforces_the_gang_contract(
    controllers: Controllers,
) -> None:
    """A Workflow applied by hand (an offline render) claiming a gang scheduler its runtime does
    not carry fails before any Job (§4.6: the contract is re-checked after overrides)."""
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    donor = _started(controllers)
    spec = api.get("workflows", donor)["spec"]  # type: ignore[index]
    spec["gangScheduler"] = {
        "schedulerName": "kai-scheduler",
        "queue": "team-a",
        "queueLabelKey": "kai.scheduler/queue",
    }
    body = {"apiVersion": "certify.glimmer.ai/v1alpha1", "kind": "Workflow",
            "metadata": {"name": "offline"}, "spec": spec}  # fmt: skip
    api.create("workflows", body)
    wf = run_workflow(controllers, "offline")
    failed = condition(wf, "Failed")
    assert failed is not None and failed["reason"] == "GangSchedulingConflict"
    assert "dcgm-level1-runtime" in failed["message"] and "team-a" in failed["message"]
    assert api.items("jobs", "certify.glimmer.ai/workflow=offline") == []


def test_workflow_overrides_match_the_detected_platform_and_reach_the_jobs(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    donor = _started(controllers)
    spec = api.get("workflows", donor)["spec"]  # type: ignore[index]
    spec["overrides"] = [
        {"when": {"platform": {"equals": "onprem"}},
         "jobTemplate": {"metadata": {"labels": {"site": "lab"}}}},
        {"when": {"platform": {"equals": "aws"}},
         "jobTemplate": {"metadata": {"labels": {"site": "cloud"}}}},
    ]  # fmt: skip
    body = {"apiVersion": "certify.glimmer.ai/v1alpha1", "kind": "Workflow",
            "metadata": {"name": "patched"}, "spec": spec}  # fmt: skip
    api.create("workflows", body)
    controllers.workflow.reconcile(NS, "patched")
    wf = api.get("workflows", "patched")
    assert wf is not None
    [applied] = wf["status"]["orchestration"]["appliedOverrides"]
    assert applied["index"] == 0 and "onprem" in applied["when"]
    controllers.workflow.reconcile(NS, "patched")
    jobs = api.items("jobs", "certify.glimmer.ai/workflow=patched")
    assert jobs and {j["metadata"]["labels"].get("site") for j in jobs} == {"lab"}
    assert ("Normal", "OverrideApplied") in {(e["type"], e["reason"]) for e in api.events()}
    finish_open_jobs(api, "patched", lambda _j: {})
    assert is_true(run_workflow(controllers, "patched"), "Succeeded")


def test_workflow_excludes_the_minority_architecture_and_says_so(controllers: Controllers) -> None:
    api = controllers.api
    nodes = [*h100_nodes(2), gpu_node("gb-01", "NVIDIA-GB200", 4)]
    add_nodes(api, nodes)
    api.create(
        "certifications",
        certification("w", [LEVEL1], {"nodeSelector": {"nvidia.com/gpu.present": "true"}}),
    )
    controllers.certification.reconcile(NS, "w")
    wf = run_workflow(controllers, WF)
    orch = wf["status"]["orchestration"]
    assert orch["excludedNodes"] == ["gb-01"]
    assert "certified h100 only" in orch["exclusionReason"]
    assert is_true(wf, "Succeeded")
    warnings = {e["reason"] for e in api.events() if e["type"] == "Warning"}
    assert "HeterogeneousGPU" in warnings
