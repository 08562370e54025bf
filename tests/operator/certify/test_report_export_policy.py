"""The ReportExportPolicy controller (specs/certify.md §2.9) against the API stand-in: one
ReportExport per finished Certification the policy matches, never two, whatever restarts;
``suspend`` stops registrations only."""

from __future__ import annotations

from typing import Any

from tests.operator.certify.conftest import NS
from tests.operator.certify.report_export_harness import (
    CLUSTER_ID,
    POLICY,
    Exports,
    exports,
    finished_certification,
    namespace,
    policy,
    receiver,
)

__all__ = ["exports", "receiver"]  # the fixtures these tests use


def _sources(made: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(m["spec"]["sourceRef"]["namespace"], m["spec"]["sourceRef"]["name"]) for m in made}


def test_a_finished_certification_gets_one_export_with_the_policy_copied_in(
    exports: Exports,
) -> None:
    cert = finished_certification(exports.api, "cert-a", exports.clock.now(), outcome="Failed")
    made_policy = policy(
        exports.api, exports.receiver.url, retry={"maxAttempts": 7, "initialBackoff": "3s"}
    )
    [made] = exports.register()
    spec = made["spec"]
    assert spec["sourceRef"] == {
        "kind": "Certification",
        "namespace": NS,
        "name": "cert-a",
        "uid": cert["metadata"]["uid"],
    }
    assert spec["policyRef"] == {
        "name": POLICY,
        "uid": made_policy["metadata"]["uid"],
        "generation": made_policy["metadata"].get("generation", 0),
    }
    assert spec["webhook"]["url"] == exports.receiver.url
    assert spec["webhook"]["bearerTokenSecretRef"] == {"name": "fleetdb-token", "key": "token"}
    assert spec["retry"] == {
        "initialBackoff": "3s",
        "maxBackoff": "15m",
        "maxAttempts": 7,
        "maxElapsedTime": "24h",
    }
    assert spec["retention"] == {"succeeded": "168h", "failed": "720h"}
    assert (spec["clusterID"], spec["reportID"]) == (CLUSTER_ID, cert["metadata"]["uid"])
    labels = made["metadata"]["labels"]
    assert labels["certify.glimmer.ai/report-export-policy"] == POLICY
    assert labels["certify.glimmer.ai/certification"] == "cert-a"


def test_registration_survives_restarts_without_a_second_export(exports: Exports) -> None:
    finished_certification(exports.api, "cert-a", exports.clock.now())
    policy(exports.api, exports.receiver.url)
    [first] = exports.register()
    for _ in range(3):
        exports.restart()
        again = exports.register()
        assert [m["metadata"]["uid"] for m in again] == [first["metadata"]["uid"]]
    # The name is a function of policy and Certification: a second policy makes its own.
    policy(exports.api, exports.receiver.url, name="to-archive")
    exports.register("to-archive")
    names = {m["metadata"]["name"] for m in exports.api.items("reportexports")}
    assert len(names) == 2 and first["metadata"]["name"] in names


def test_only_finished_certifications_with_a_report_in_allowed_namespaces_that_match(
    exports: Exports,
) -> None:
    api, at = exports.api, exports.clock.now()
    namespace(api, "team-a")
    namespace(api, "team-b")
    finished_certification(api, "picked", at, labels={"fleet": "prod"})
    finished_certification(api, "other-fleet", at, labels={"fleet": "dev"})
    finished_certification(api, "no-report", at, labels={"fleet": "prod"}, report=False)
    finished_certification(api, "in-team-a", at, namespace="team-a", labels={"fleet": "prod"})
    finished_certification(api, "in-team-b", at, namespace="team-b", labels={"fleet": "prod"})
    running = finished_certification(api, "running", at, labels={"fleet": "prod"})
    running["status"]["conditions"] = [
        {**c, "status": "True" if c["type"] == "InProgress" else "False"}
        for c in running["status"]["conditions"]
    ]
    put = api.http.put(f"{api.path('certifications', 'running')}/status", json=running)
    assert put.status_code == 200, put.text
    policy(
        api,
        exports.receiver.url,
        namespaces=(NS, "team-a"),
        selector={
            "matchLabels": {"fleet": "prod"},
            "matchExpressions": [{"key": "fleet", "operator": "In", "values": ["prod", "x"]}],
        },
    )
    assert _sources(exports.register()) == {(NS, "picked"), ("team-a", "in-team-a")}


def test_a_certification_finished_before_the_retention_window_is_not_registered(
    exports: Exports,
) -> None:
    at = exports.clock.now()
    finished_certification(exports.api, "old", at)
    exports.clock.advance(169 * 3600)  # past the shorter retention (168h)
    finished_certification(exports.api, "recent", exports.clock.now())
    policy(exports.api, exports.receiver.url)
    assert _sources(exports.register()) == {(NS, "recent")}


def test_suspend_stops_new_registrations_and_not_deliveries_under_way(exports: Exports) -> None:
    finished_certification(exports.api, "cert-a", exports.clock.now())
    policy(exports.api, exports.receiver.url)
    [made] = exports.register()
    got = exports.api.http.patch(
        exports.api.path("reportexportpolicies", POLICY),
        json={"spec": {"suspend": True}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert got.status_code == 200, got.text
    finished_certification(exports.api, "cert-b", exports.clock.now())
    assert len(exports.register()) == 1
    exports.drive(made["metadata"]["name"])
    assert exports.status(made["metadata"]["name"])["phase"] == "Succeeded"
    # Resumed: what finished meanwhile is registered.
    got = exports.api.http.patch(
        exports.api.path("reportexportpolicies", POLICY),
        json={"spec": {"suspend": False}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert got.status_code == 200, got.text
    assert _sources(exports.register()) == {(NS, "cert-a"), (NS, "cert-b")}


def test_the_api_refuses_a_policy_outside_the_bounds(exports: Exports) -> None:
    base = {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "ReportExportPolicy",
        "metadata": {"name": "bad", "namespace": NS},
    }
    for spec in (
        {"source": {"namespaces": []}, "webhook": {"url": "https://x.example/"}},
        {"source": {"namespaces": [NS]}, "webhook": {"url": "ftp://x.example/"}},
        {
            "source": {"namespaces": [NS]},
            "webhook": {"url": "https://x.example/"},
            "retry": {"maxAttempts": 0},
        },
    ):
        got = exports.api.http.post(
            exports.api.path("reportexportpolicies"), json={**base, "spec": spec}
        )
        assert got.status_code == 422, spec


def test_a_policy_past_the_bounds_the_api_cannot_check_registers_nothing(
    exports: Exports,
) -> None:
    finished_certification(exports.api, "cert-a", exports.clock.now())
    policy(exports.api, exports.receiver.url, retry={"initialBackoff": "2h"})  # past 1h
    assert exports.register() == []
    [event] = [e for e in exports.api.events() if e.get("reason") == "InvalidPolicy"]
    assert event["type"] == "Warning"
    assert "spec.retry.initialBackoff" in event["message"] and "1s..1h" in event["message"]


def test_an_export_deleted_by_hand_within_the_window_is_registered_again(
    exports: Exports,
) -> None:
    finished_certification(exports.api, "cert-a", exports.clock.now())
    policy(exports.api, exports.receiver.url)
    [first] = exports.register()
    name = first["metadata"]["name"]
    gone = exports.api.http.delete(exports.api.path("reportexports", name))
    assert gone.status_code == 200, gone.text
    [again] = exports.register()
    assert again["metadata"]["name"] == name
    assert again["metadata"]["uid"] != first["metadata"]["uid"]
