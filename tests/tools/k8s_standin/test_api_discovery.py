"""Discovery as clients walk it, and CRDs registered by applying them through the API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.tools.k8s_standin.conftest import MERGE
from tools.k8s_standin.background import api_in_thread

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.test/v1/namespaces/default/widgets"


def widget_crd() -> dict[str, Any]:
    spec_schema = {
        "type": "object",
        "properties": {"size": {"type": "integer", "minimum": 1}},
        "required": ["size"],
        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "spec is immutable"}],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.test"},
        "spec": {
            "group": "example.test",
            "names": {
                "kind": "Widget",
                "plural": "widgets",
                "singular": "widget",
                "shortNames": ["wd"],
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}
                    },
                }
            ],
        },
    }


def test_discovery_paths_answer_with_and_without_a_trailing_slash(http: httpx.Client) -> None:
    for path in ("/api", "/api/", "/apis", "/apis/", "/version", "/version/"):
        r = http.get(path)
        assert r.status_code == 200, path
        assert r.headers["content-type"] == "application/json"
    assert http.get("/api").json()["serverAddressByClientCIDRs"] == []


def test_the_core_group_version_is_v1_and_lists_pods_with_their_subresources(
    http: httpx.Client,
) -> None:
    doc = http.get("/api/v1").json()
    assert doc["groupVersion"] == "v1"
    names = {r["name"] for r in doc["resources"]}
    assert {"pods", "pods/status", "pods/log", "nodes", "services", "events"} <= names


def test_the_glimmer_crds_are_preloaded_and_discoverable(http: httpx.Client) -> None:
    groups = {g["name"] for g in http.get("/apis").json()["groups"]}
    assert "burnin.glimmer.ai" in groups
    doc = http.get("/apis/burnin.glimmer.ai/v1alpha1").json()
    runs = next(r for r in doc["resources"] if r["name"] == "burninruns")
    assert runs["kind"] == "BurnInRun"
    assert runs["shortNames"] == ["bir"]
    assert "burninruns/status" in {r["name"] for r in doc["resources"]}


def test_a_crd_applied_through_the_api_serves_its_resource_with_its_schema(
    http: httpx.Client,
) -> None:
    created = http.post(CRDS, json=widget_crd())
    assert created.status_code == 201
    conditions = {c["type"]: c["status"] for c in created.json()["status"]["conditions"]}
    assert conditions["Established"] == "True"
    assert http.get("/apis/example.test/v1").status_code == 200
    bad = http.post(WIDGETS, json={"metadata": {"name": "w"}, "spec": {"size": 0}})
    assert bad.status_code == 422
    ok = http.post(WIDGETS, json={"metadata": {"name": "w"}, "spec": {"size": 2}})
    assert ok.status_code == 201
    assert ok.json()["kind"] == "Widget"


def test_a_transition_rule_refuses_the_change_it_forbids(http: httpx.Client) -> None:
    http.post(CRDS, json=widget_crd())
    http.post(WIDGETS, json={"metadata": {"name": "w"}, "spec": {"size": 2}})
    r = http.patch(f"{WIDGETS}/w", json={"spec": {"size": 3}}, headers=MERGE)
    assert r.status_code == 422
    assert "spec is immutable" in r.json()["message"]
    assert (
        http.patch(
            f"{WIDGETS}/w", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE
        ).status_code
        == 200
    )


def test_deleting_a_crd_removes_its_resource(http: httpx.Client) -> None:
    http.post(CRDS, json=widget_crd())
    http.delete(f"{CRDS}/widgets.example.test")
    assert http.get(WIDGETS).status_code == 404
    assert "example.test" not in {g["name"] for g in http.get("/apis").json()["groups"]}


def test_crds_preloaded_on_demand_from_another_thread_are_served() -> None:
    certify = Path(__file__).resolve().parents[3] / "deploy" / "crds-certify"
    with api_in_thread() as api, httpx.Client(base_url=api.url) as http:
        assert http.get("/apis/certify.glimmer.ai/v1alpha1").status_code == 404
        names = api.preload_crds(certify)
        assert "certifications.certify.glimmer.ai" in names
        assert http.get("/apis/certify.glimmer.ai/v1alpha1").status_code == 200
