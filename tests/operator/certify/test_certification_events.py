"""Scenario 33 (specs/certify.md §9.2): how a Certification fails, the Events it posts on the
way, a same-named Workflow of someone else (never adopted, never deleted), an immutable spec,
and a Certification in a namespace of its own."""

from __future__ import annotations

import json
from typing import Any

from glimmer.operator.certify.certification import CertificationController
from glimmer.operator.certify.workflow_cluster import Cluster, Kind, Rejected
from tests.operator.certify.conftest import (
    NS,
    Controllers,
    add_nodes,
    certification,
    condition,
    h100_nodes,
    is_true,
    run_certification,
)

LEVEL1 = {"domain": "diagnostics", "variant": "dcgm-level1"}
LEVEL2 = {"domain": "diagnostics", "variant": "dcgm-level2"}


def _events(ctl: Controllers, namespace: str = NS) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in ctl.api.events(namespace)]


def test_certification_fail_names_a_category_not_in_the_catalog(controllers: Controllers) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    bad = {"domain": "diagnostics", "variant": "dcgm-level9"}
    api.create("certifications", certification("nope", [LEVEL1, bad]))
    controllers.certification.reconcile(NS, "nope")
    body = api.get("certifications", "nope")
    failed = condition(body, "Failed")
    assert failed is not None and failed["status"] == "True"
    assert failed["reason"] == "CategoryNotFound"
    assert "spec.categories[1]" in failed["message"] and "dcgm-level9" in failed["message"]
    assert api.items("workflows") == []  # validated all first: not even category 0 started
    assert ("Warning", "CategoryNotFound", failed["message"]) in _events(controllers)


def test_certification_event_progress_is_normal_on_every_step(controllers: Controllers) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    api.create("certifications", certification("steps", [LEVEL1, LEVEL2]))
    run_certification(controllers, "steps")
    seen = _events(controllers)
    created = [m for t, r, m in seen if r == "WorkflowCreated" and t == "Normal"]
    assert any(m.endswith("(1 of 2)") for m in created)
    assert any(m.endswith("(2 of 2)") for m in created)
    assert ("Normal", "AllWorkflowsSucceeded", "All 2 categories succeeded") in seen
    assert not [e for e in seen if e[0] == "Warning"]


class RefusingWorkflows(Cluster):
    """An API that refuses every Workflow as invalid (an admission webhook, a schema)."""

    def create(self, kind: Kind, body: Any, namespace: str | None) -> dict[str, Any]:
        if body.get("kind") == "Workflow":
            raise Rejected("create Workflow: admission webhook denied the request (HTTP 422)")
        return super().create(kind, body, namespace)


def test_certification_event_rejected_fails_the_category_and_runs_the_next(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    api.create("certifications", certification("rej", [LEVEL1]))
    refusing = CertificationController(
        RefusingWorkflows(api.client), controllers.clock.now, poll=0.0
    )
    refusing.reconcile(NS, "rej")
    body = api.get("certifications", "rej")
    assert is_true(body, "Failed")
    assert body is not None and body["status"]["categoryStatuses"][0]["status"] == "Failed"
    warnings = [(r, m) for t, r, m in _events(controllers) if t == "Warning"]
    assert any(r == "WorkflowFailed" and "rejected" in m for r, m in warnings)


def test_certification_event_build_failed_names_what_no_node_can_supply(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    greedy = {**LEVEL1, "options": {"gpusPerNode": 16}}
    api.create("certifications", certification("greedy", [greedy, LEVEL2]))
    body = run_certification(controllers, "greedy")
    assert [c["status"] for c in body["status"]["categoryStatuses"]] == ["Failed", "Succeeded"]
    warnings = [(r, m) for t, r, m in _events(controllers) if t == "Warning"]
    [message] = [m for r, m in warnings if r == "WorkflowValidationFailed"]
    assert "16 nvidia.com/gpu" in message and "best available is 8" in message
    report = api.configmap("greedy-report")
    assert report is not None
    first, _ = json.loads(report["data"]["result.json"])["categories"]
    assert first["status"] == "Failed" and first["failureReason"] == message


def _foreign_workflow(ctl: Controllers, name: str) -> dict[str, Any]:
    """A Workflow named ``name`` that no Certification controls (its spec a real one's)."""
    api = ctl.api
    api.create("certifications", certification("donor", [LEVEL1]))
    ctl.certification.reconcile(NS, "donor")
    donor = api.get("workflows", "donor-diagnostics-dcgm-level1")
    assert donor is not None
    body = {
        "apiVersion": donor["apiVersion"],
        "kind": "Workflow",
        "metadata": {"name": name, "labels": {"team": "someone-else"}},
        "spec": donor["spec"],
    }
    return api.create("workflows", body)


def test_certification_delete_foreign_workflow_survives_and_is_never_adopted(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    foreign = _foreign_workflow(controllers, "mine-diagnostics-dcgm-level1")
    api.create("certifications", certification("mine", [LEVEL1]))
    controllers.certification.reconcile(NS, "mine")
    body = api.get("certifications", "mine")
    failed = condition(body, "Failed")
    assert failed is not None and failed["reason"] == "WorkflowNameCollision"
    kept = api.get("workflows", "mine-diagnostics-dcgm-level1")
    assert kept is not None and kept["metadata"]["uid"] == foreign["metadata"]["uid"]
    assert not kept["metadata"].get("ownerReferences")
    # Deleted: the finalizer path leaves the foreign Workflow alone and lets the cert go.
    assert api.http.delete(api.path("certifications", "mine")).status_code == 200
    controllers.certification.reconcile(NS, "mine")
    assert api.get("certifications", "mine") is None
    survivor = api.get("workflows", "mine-diagnostics-dcgm-level1")
    assert survivor is not None and survivor["metadata"]["uid"] == foreign["metadata"]["uid"]


def test_certification_deletion_deletes_the_workflows_it_controls(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    api.create("certifications", certification("gone", [LEVEL1]))
    controllers.certification.reconcile(NS, "gone")
    assert api.get("workflows", "gone-diagnostics-dcgm-level1") is not None
    assert api.http.delete(api.path("certifications", "gone")).status_code == 200
    controllers.certification.reconcile(NS, "gone")
    assert api.get("certifications", "gone") is None
    assert api.get("workflows", "gone-diagnostics-dcgm-level1") is None


def test_certification_spec_immutable_terminal_refuses_a_changed_spec(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    api.create("certifications", certification("frozen", [LEVEL1]))
    body = run_certification(controllers, "frozen")
    assert is_true(body, "Succeeded")
    body["spec"]["categories"].append(LEVEL2)
    put = api.http.put(api.path("certifications", "frozen"), json=body)
    assert put.status_code == 422, put.text
    assert "spec is immutable after creation" in put.text
    controllers.certification.reconcile(NS, "frozen")
    again = api.get("certifications", "frozen")
    assert again is not None and len(again["spec"]["categories"]) == 1
    assert is_true(again, "Succeeded")


def test_certification_namespace_keeps_everything_in_the_certifications_namespace(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    made = api.http.post("/api/v1/namespaces", json={"metadata": {"name": "team-a"}})
    assert made.status_code == 201, made.text
    api.create("certifications", certification("ns", [LEVEL1], namespace="team-a"), "team-a")
    body = run_certification(controllers, "ns", namespace="team-a")
    assert is_true(body, "Succeeded")
    assert [w["metadata"]["name"] for w in api.items("workflows", namespace="team-a")] == [
        "ns-diagnostics-dcgm-level1"
    ]
    assert api.items("workflows") == []
    assert len(api.items("jobs", namespace="team-a")) == 2
    assert api.configmap("ns-report", "team-a") is not None
    assert api.configmap("ns-report") is None


def test_certification_fails_a_category_whose_workflow_vanished_and_runs_the_next(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    api.create("certifications", certification("vanish", [LEVEL1, LEVEL2]))
    controllers.certification.reconcile(NS, "vanish")
    assert (
        api.http.delete(api.path("workflows", "vanish-diagnostics-dcgm-level1")).status_code == 200
    )
    body = run_certification(controllers, "vanish")
    assert [c["status"] for c in body["status"]["categoryStatuses"]] == ["Failed", "Succeeded"]
    warnings = [(r, m) for t, r, m in _events(controllers) if t == "Warning"]
    assert ("WorkflowDeleted", "Workflow vanish-diagnostics-dcgm-level1 was deleted before it "
            "finished") in warnings  # fmt: skip
