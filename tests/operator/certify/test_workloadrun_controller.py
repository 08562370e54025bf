"""The WorkloadRun controller (specs/certify.md §3.5): one Workflow of the run's name, its
groups run once per iteration, and the Workflow's state mirrored back (ValidationFailed first);
build failures and a foreign Workflow of the name fail the run, never retried."""

from __future__ import annotations

from typing import Any

from glimmer.operator.certify.workflow_discovery import category_of
from tests.operator.certify.conftest import (
    NS,
    Controllers,
    add_nodes,
    condition,
    gpu_node,
    is_true,
    run_workflow,
)


def workload_run(name: str, num_nodes: int = 1, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "WorkloadRun",
        "metadata": {"name": name},
        "spec": {
            "image": "nvcr.io/nvidia/pytorch:25.01-py3",
            "numNodes": num_nodes,
            "framework": {"exec": {"command": ["all_reduce_perf", "-b", "8", "-e", "8G"]}},
            **spec,
        },
    }


def _cliques(count: int) -> list[dict[str, Any]]:
    """``count`` H100 nodes labelled two to a clique (an H100 run adds no ComputeDomain, whose
    CRD this API does not serve)."""
    return [
        gpu_node(f"gb-{i:02d}", labels={"nvidia.com/gpu.clique": f"c{i // 2}"})
        for i in range(count)
    ]


def test_workloadrun_builds_its_workflow_and_mirrors_success(controllers: Controllers) -> None:
    api = controllers.api
    add_nodes(api, _cliques(4))
    run = api.create("workloadruns", workload_run("probe", 2))
    controllers.workloadrun.reconcile(NS, "probe")
    wf = api.get("workflows", "probe")
    assert wf is not None and category_of(wf) is None
    assert wf["metadata"]["labels"]["certify.glimmer.ai/workload-run"] == "probe"
    assert wf["metadata"]["ownerReferences"][0]["uid"] == run["metadata"]["uid"]
    body = api.get("workloadruns", "probe")
    assert body is not None
    status = body["status"]
    assert (status["detectedPlatform"], status["detectedGPUArchitecture"]) == ("onprem", "h100")
    assert status["resolvedGpusPerNode"] == 8
    assert status["workflowRef"] == {"name": "probe", "namespace": NS}
    finished = run_workflow(controllers, "probe")
    assert is_true(finished, "Succeeded")
    jobs = api.items("jobs", "certify.glimmer.ai/workflow=probe")
    assert len(jobs) == 2  # 4 nodes, 2 per job
    controllers.workloadrun.reconcile(NS, "probe")
    body = api.get("workloadruns", "probe")
    done = condition(body, "Succeeded")
    assert done is not None and done["status"] == "True" and done["reason"] == "WorkflowSucceeded"
    superseded = condition(body, "InProgress")
    assert superseded is not None and superseded["status"] == "False"
    assert superseded["reason"] == "Superseded"
    assert body is not None and body["status"]["succeededNodesRef"]["name"].startswith(
        "succeeded-nodes-"
    )


def test_workflow_topology_intra_rack_pins_each_job_to_one_clique(controllers: Controllers) -> None:
    api = controllers.api
    add_nodes(api, _cliques(4))
    api.create("workloadruns", workload_run("rack", 2, orchestration={"testScale": "intra-rack"}))
    controllers.workloadrun.reconcile(NS, "rack")
    run_workflow(controllers, "rack")
    groups = sorted(
        j["metadata"]["annotations"]["certify.glimmer.ai/group-nodes"]
        for j in api.items("jobs", "certify.glimmer.ai/workflow=rack")
    )
    assert groups == ["gb-00,gb-01", "gb-02,gb-03"]


def test_workflow_unpinned_multi_clique_spans_the_cliques_in_one_job(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, _cliques(4))
    api.create("workloadruns", workload_run("wide", 4))
    controllers.workloadrun.reconcile(NS, "wide")
    run_workflow(controllers, "wide")
    [job] = api.items("jobs", "certify.glimmer.ai/workflow=wide")
    assert job["metadata"]["annotations"]["certify.glimmer.ai/group-nodes"] == (
        "gb-00,gb-01,gb-02,gb-03"
    )
    assert job["spec"]["workload"]["trainJob"]["trainer"]["numNodes"] == 4


def test_workloadrun_repeat_count_runs_every_group_once_per_iteration(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, _cliques(2))
    api.create("workloadruns", workload_run("again", 2, orchestration={"repeatCount": 3}))
    controllers.workloadrun.reconcile(NS, "again")
    assert is_true(run_workflow(controllers, "again"), "Succeeded")
    names = sorted(j["metadata"]["name"] for j in api.items("jobs"))
    assert names == [f"again-group-0-iter-{n}" for n in (1, 2, 3)]


def test_workloadrun_mirrors_validation_failed_first(controllers: Controllers) -> None:
    api = controllers.api
    add_nodes(api, _cliques(2))
    api.create("workloadruns", workload_run("slow", 2))
    controllers.workloadrun.reconcile(NS, "slow")
    run_workflow(controllers, "slow", lambda _j: {"validation_failed": True, "exit_code": 1})
    controllers.workloadrun.reconcile(NS, "slow")
    body = api.get("workloadruns", "slow")
    failed = condition(body, "Failed")
    assert failed is not None and failed["reason"] == "WorkflowValidationFailed"
    invalid = condition(body, "ValidationFailed")
    assert invalid is not None and invalid["status"] == "True"
    assert invalid["reason"] == "ThresholdViolation"


def test_workloadrun_build_failed_is_terminal_and_names_the_field(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, _cliques(2))
    bad = workload_run(
        "clash",
        gangScheduler={"schedulerName": "kai-scheduler", "queue": "q"},
        workloadMetadata={"labels": {"kai.scheduler/queue": "other"}},
    )
    api.create("workloadruns", bad)
    controllers.workloadrun.reconcile(NS, "clash")
    body = api.get("workloadruns", "clash")
    failed = condition(body, "Failed")
    assert failed is not None and failed["reason"] == "BuildFailed"
    assert "spec.workloadMetadata.labels" in failed["message"] and '"other"' in failed["message"]
    assert api.get("workflows", "clash") is None
    controllers.workloadrun.reconcile(NS, "clash")
    assert api.get("workflows", "clash") is None  # never retried


def test_workloadrun_name_collision_with_a_foreign_workflow_fails(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, _cliques(2))
    api.create("workloadruns", workload_run("donor"))
    controllers.workloadrun.reconcile(NS, "donor")
    donor = api.get("workflows", "donor")
    assert donor is not None
    api.create(
        "workflows",
        {"apiVersion": donor["apiVersion"], "kind": "Workflow",
         "metadata": {"name": "taken"}, "spec": donor["spec"]},
    )  # fmt: skip
    api.create("workloadruns", workload_run("taken"))
    controllers.workloadrun.reconcile(NS, "taken")
    failed = condition(api.get("workloadruns", "taken"), "Failed")
    assert failed is not None and failed["reason"] == "WorkflowNameCollision"
    kept = api.get("workflows", "taken")
    assert kept is not None and not kept["metadata"].get("ownerReferences")


def test_workloadrun_fails_when_its_workflow_is_deleted(controllers: Controllers) -> None:
    api = controllers.api
    add_nodes(api, _cliques(2))
    api.create("workloadruns", workload_run("lost"))
    controllers.workloadrun.reconcile(NS, "lost")
    assert api.http.delete(api.path("workflows", "lost")).status_code == 200
    controllers.workloadrun.reconcile(NS, "lost")
    failed = condition(api.get("workloadruns", "lost"), "Failed")
    assert failed is not None and failed["reason"] == "WorkflowDeleted"


def test_workflow_fails_clearly_when_a_dependency_kind_is_not_served(
    controllers: Controllers,
) -> None:
    """A GB200 run's ComputeDomain dependency, on an API without that CRD: the Workflow fails
    naming the kind, instead of retrying for ever."""
    api = controllers.api
    add_nodes(api, [gpu_node(f"gb-{i}", "NVIDIA-GB200", 4) for i in range(2)])
    api.create("workloadruns", workload_run("nvl", 2))
    controllers.workloadrun.reconcile(NS, "nvl")
    wf = run_workflow(controllers, "nvl")
    failed = condition(wf, "Failed")
    assert failed is not None and failed["reason"] == "DependencyError"
    assert "ComputeDomain" in failed["message"] and "CRD" in failed["message"]


def test_workloadrun_waits_for_the_workflow_a_deleted_predecessor_left(
    controllers: Controllers,
) -> None:
    """A WorkloadRun created again under the name of a deleted one finds the predecessor's
    Workflow (controlled by a WorkloadRun of that name, another UID) still there, the garbage
    collector not having got to it: it waits, and adopts nothing."""
    api = controllers.api
    add_nodes(api, _cliques(2))
    api.create("workloadruns", workload_run("donor"))
    controllers.workloadrun.reconcile(NS, "donor")
    donor = api.get("workflows", "donor")
    assert donor is not None
    gone = {"apiVersion": "certify.glimmer.ai/v1alpha1", "kind": "WorkloadRun", "name": "again",
            "uid": "0b5e7e1e-0000-4000-8000-000000000000", "controller": True}  # fmt: skip
    left = api.create(
        "workflows",
        {"apiVersion": donor["apiVersion"], "kind": "Workflow",
         "metadata": {"name": "again", "ownerReferences": [gone]}, "spec": donor["spec"]},
    )  # fmt: skip
    api.create("workloadruns", workload_run("again"))
    assert controllers.workloadrun.reconcile(NS, "again") == 0.0  # poll: wait for the name
    body = api.get("workloadruns", "again")
    assert body is not None and not (body.get("status") or {}).get("conditions")
    kept = api.get("workflows", "again")
    assert kept is not None and kept["metadata"]["uid"] == left["metadata"]["uid"]
    assert kept["metadata"]["ownerReferences"] == [gone]
