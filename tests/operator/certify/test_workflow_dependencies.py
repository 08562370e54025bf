"""§3.4 dependency lifecycle: creation in topological order (a dependency after the ones it
names, the author's order among equals and in a cycle), identity, and a name held by an object
of someone else (terminal, never adopted)."""

from __future__ import annotations

from typing import Any

from glimmer.operator.certify.dependencies import creation_order, has_identity
from tests.operator.certify.conftest import (
    NS,
    Controllers,
    add_nodes,
    certification,
    condition,
    h100_nodes,
    run_workflow,
)


def dep(kind: str, name: str, **body: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": kind, "metadata": {"name": name}, **body}


def names(deps: list[Any]) -> list[str]:
    return [d["metadata"]["name"] for d in deps]


def test_dependencies_are_created_after_what_they_name() -> None:
    claim = dep("PersistentVolumeClaim", "ckpt", spec={"storageClassName": "fast"})
    runtime = dep("TrainingRuntime", "rt", spec={"volumes": [{"claimName": "ckpt"}], "cm": "cfg"})
    config = dep("ConfigMap", "cfg", data={"a": "b"})
    assert names(creation_order([runtime, claim, config])) == ["ckpt", "cfg", "rt"]


def test_a_runtime_claiming_a_compute_domains_channel_comes_after_the_domain() -> None:
    """The channel template is the DRA driver's, made for the domain: a runtime claiming it
    names the domain's product, so it is created after the domain and deleted before it."""
    runtime = dep("TrainingRuntime", "rt", spec={"resourceClaimTemplateName": "cd-channel"})
    domain = {
        "apiVersion": "resource.nvidia.com/v1beta1",
        "kind": "ComputeDomain",
        "metadata": {"name": "cd"},
        "spec": {"channel": {"resourceClaimTemplate": {"name": "cd-channel"}}},
    }
    assert names(creation_order([runtime, domain])) == ["cd", "rt"]


def test_dependencies_keep_the_authors_order_among_equals_and_in_a_cycle() -> None:
    a, b, c = dep("ConfigMap", "a"), dep("ConfigMap", "b"), dep("ConfigMap", "c")
    assert names(creation_order([c, a, b])) == ["c", "a", "b"]
    x = dep("ConfigMap", "x", data={"peer": "y"})
    y = dep("ConfigMap", "y", data={"peer": "x"})
    assert names(creation_order([x, y])) == ["x", "y"]


def test_dependency_identity_is_the_workflow_uid_not_the_name() -> None:
    workflow = {"metadata": {"name": "wf", "uid": "uid-1"}}
    ours = {"metadata": {"annotations": {"certify.glimmer.ai/workflow-uid": "uid-1"}}}
    old = {"metadata": {"annotations": {"certify.glimmer.ai/workflow-uid": "uid-0"}}}
    legacy = {"metadata": {"labels": {"certify.glimmer.ai/workflow": "wf"}}}
    assert has_identity(ours, workflow)
    assert not has_identity(old, workflow)  # a predecessor of the same name: not ours
    assert has_identity(legacy, workflow)
    assert not has_identity({"metadata": {}}, workflow)


def test_workflow_dependency_name_collision_is_terminal(controllers: Controllers) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    api.create("certifications", certification("d", [{"domain": "diagnostics",
                                                      "variant": "dcgm-level1"}]))  # fmt: skip
    controllers.certification.reconcile(NS, "d")
    donor = api.get("workflows", "d-diagnostics-dcgm-level1")
    assert donor is not None
    spec = donor["spec"]
    spec["dependencies"].append(dep("ConfigMap", "shared-settings", data={"k": "v"}))
    made = api.http.post(f"/api/v1/namespaces/{NS}/configmaps", json=dep("ConfigMap",
                         "shared-settings", data={"k": "someone else's"}))  # fmt: skip
    assert made.status_code == 201, made.text
    body = {"apiVersion": donor["apiVersion"], "kind": "Workflow",
            "metadata": {"name": "clash"}, "spec": spec}  # fmt: skip
    api.create("workflows", body)
    wf = run_workflow(controllers, "clash")
    failed = condition(wf, "Failed")
    assert failed is not None and failed["reason"] == "DependencyNameCollision"
    assert "shared-settings" in failed["message"]
    kept = api.configmap("shared-settings")
    assert kept is not None and kept["data"] == {"k": "someone else's"}
    assert api.items("jobs", "certify.glimmer.ai/workflow=clash") == []
