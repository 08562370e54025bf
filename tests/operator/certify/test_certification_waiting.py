"""§3.1 steps 2 and 6: a Certification whose target matches no node yet waits for nodes for
five minutes from its creation (InProgress/WaitingForNodes), then fails the category; and a
terminal Certification whose failed category's Workflow runs again is reopened."""

from __future__ import annotations

from tests.operator.certify.conftest import (
    NS,
    Controllers,
    add_nodes,
    certification,
    condition,
    h100_nodes,
    is_true,
)

LEVEL1 = {"domain": "diagnostics", "variant": "dcgm-level1"}


def test_certification_waits_for_nodes_then_starts_when_they_join(
    controllers: Controllers,
) -> None:
    api = controllers.api
    api.create("certifications", certification("early", [LEVEL1]))
    assert controllers.certification.reconcile(NS, "early") == 10.0
    body = api.get("certifications", "early")
    waiting = condition(body, "InProgress")
    assert waiting is not None and waiting["status"] == "True"
    assert waiting["reason"] == "WaitingForNodes"
    assert "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3" in waiting["message"]
    assert api.items("workflows") == []
    controllers.clock.advance(20)
    controllers.certification.reconcile(NS, "early")  # still waiting: one Event for the wait
    waits = [e for e in api.events() if e["reason"] == "WaitingForNodes"]
    assert len(waits) == 1 and waits[0]["type"] == "Normal"
    add_nodes(api, h100_nodes(2))
    controllers.clock.advance(60)
    controllers.certification.reconcile(NS, "early")
    assert [w["metadata"]["name"] for w in api.items("workflows")] == [
        "early-diagnostics-dcgm-level1"
    ]


def test_certification_fails_the_category_after_five_minutes_without_nodes(
    controllers: Controllers,
) -> None:
    api = controllers.api
    api.create("certifications", certification("never", [LEVEL1]))
    controllers.certification.reconcile(NS, "never")
    controllers.clock.advance(301)
    controllers.certification.reconcile(NS, "never")
    body = api.get("certifications", "never")
    assert is_true(body, "Failed")
    assert body is not None and body["status"]["categoryStatuses"][0]["status"] == "Failed"
    warnings = [(e["reason"], e["message"]) for e in api.events() if e["type"] == "Warning"]
    assert any(r == "NoTargetNodes" and "after 5 minutes" in m for r, m in warnings)


def test_certification_stale_terminal_reopens_a_failed_category_whose_workflow_runs(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    api.create("certifications", certification("stale", [LEVEL1]))
    controllers.certification.reconcile(NS, "stale")
    body = api.get("certifications", "stale")
    assert body is not None
    # As if the Certification had seen its Workflow fail, while the Workflow still runs.
    status = body["status"]
    status["categoryStatuses"][0]["status"] = "Failed"
    for c in status["conditions"]:
        c["status"] = "True" if c["type"] == "Failed" else "False"
    put = api.http.put(api.path("certifications", "stale") + "/status", json=body)
    assert put.status_code == 200, put.text
    controllers.certification.reconcile(NS, "stale")
    again = api.get("certifications", "stale")
    progress = condition(again, "InProgress")
    assert progress is not None and progress["status"] == "True"
    assert progress["reason"] == "Recovered"
    assert again is not None and again["status"]["categoryStatuses"][0]["status"] == "InProgress"
