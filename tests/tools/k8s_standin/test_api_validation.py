"""Every write validated as a real API server validates it: custom resources against their
CRD's schema (pruned and defaulted first), Pods against the Pod schema subset, metadata for all."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import yaml

from tests.tools.k8s_standin.conftest import MERGE, PODS, RUNS, pod_body, run_body
from tools.k8s_standin import cel

CRDS = Path(__file__).resolve().parents[3] / "deploy"


def causes(r: httpx.Response) -> list[str]:
    assert (r.status_code, r.json()["reason"]) == (422, "Invalid"), r.text
    return [c["field"] for c in r.json()["details"]["causes"]]


def test_a_status_of_the_wrong_type_is_422_naming_the_field(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    r = http.patch(f"{RUNS}/smoke/status", json={"status": {"passed": "three"}}, headers=MERGE)
    assert causes(r) == ["status.passed"]
    assert "must be of type integer" in r.json()["message"]


def test_a_null_where_the_schema_says_array_is_422(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    body = http.get(f"{RUNS}/smoke").json()
    body["status"] = {
        "phase": "Running",
        "results": [{"name": "gpu-burn", "phase": "Running", "nodes": None}],
    }
    r = http.put(f"{RUNS}/smoke/status", json=body)
    assert causes(r) == ["status.results[0].nodes"]


def test_a_missing_required_field_is_422_required_value(http: httpx.Client) -> None:
    body = run_body()
    del body["spec"]["target"]
    assert causes(http.post(RUNS, json=body)) == ["spec.target"]


def test_an_enum_or_bound_violation_is_422(http: httpx.Client) -> None:
    http.post(RUNS, json=run_body())
    r = http.patch(
        f"{RUNS}/smoke/status", json={"status": {"phase": "Sideways", "passed": -1}}, headers=MERGE
    )
    assert sorted(causes(r)) == ["status.passed", "status.phase"]


def test_unknown_fields_are_pruned_and_schema_defaults_filled(http: httpx.Client) -> None:
    body = run_body()
    body["spec"]["noSuchField"] = 1
    body["extra"] = {"x": 1}
    stored = http.post(RUNS, json=body).json()
    assert "noSuchField" not in stored["spec"]
    assert "extra" not in stored
    status = http.patch(
        f"{RUNS}/smoke/status", json={"status": {"passed": 1}}, headers=MERGE
    ).json()
    assert status["status"]["phase"] == "Pending"  # the CRD's default


def test_an_x_kubernetes_validations_rule_is_enforced(http: httpx.Client) -> None:
    sink = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInSink",
        "metadata": {"name": "hook"},
        "spec": {"type": "Webhook"},
    }
    r = http.post("/apis/burnin.glimmer.ai/v1alpha1/namespaces/default/burninsinks", json=sink)
    assert r.status_code == 422
    assert "a Webhook sink needs spec.webhook" in r.json()["message"]


@pytest.mark.parametrize("folder", ["crds", "crds-certify"])
def test_every_rule_in_the_crds_is_inside_the_cel_subset(folder: str) -> None:
    for path in sorted((CRDS / folder).glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                for version in doc["spec"]["versions"]:
                    assert cel.unsupported(version["schema"]["openAPIV3Schema"]) == [], path.name


def test_a_pod_with_a_wrong_type_or_a_null_is_422_naming_the_field(http: httpx.Client) -> None:
    pod = pod_body()
    pod["spec"]["containers"][0]["command"] = "true"
    pod["spec"]["containers"][0]["env"] = [{"name": "A", "value": None}]
    pod["spec"]["activeDeadlineSeconds"] = "60"
    assert sorted(causes(http.post(PODS, json=pod))) == [
        "spec.activeDeadlineSeconds",
        "spec.containers[0].command",
        "spec.containers[0].env[0].value",
    ]


def test_a_pod_status_is_validated_too(http: httpx.Client) -> None:
    http.post(PODS, json=pod_body())
    r = http.patch(
        f"{PODS}/runner/status",
        json={
            "status": {"containerStatuses": [{"name": "runner", "ready": "yes", "restartCount": 0}]}
        },
        headers=MERGE,
    )
    assert causes(r) == ["status.containerStatuses[0].ready"]


def test_label_values_and_object_names_must_have_the_legal_shape(http: httpx.Client) -> None:
    bad_label = pod_body("ok", run="not a label value")
    assert causes(http.post(PODS, json=bad_label)) == ["metadata.labels.run"]
    assert causes(http.post(PODS, json=pod_body("Upper_Case"))) == ["metadata.name"]
    service = {"metadata": {"name": "1-starts-with-digit"}, "spec": {"clusterIP": "None"}}
    assert causes(http.post("/api/v1/namespaces/default/services", json=service)) == [
        "metadata.name"
    ]


def test_a_null_in_the_spec_is_pruned_then_defaulted_as_the_api_server_does(
    http: httpx.Client,
) -> None:
    body = run_body(maxConcurrentNodes=None)
    body["spec"]["target"]["nodeSelector"] = None
    stored = http.post(RUNS, json=body).json()
    assert stored["spec"]["maxConcurrentNodes"] == 1  # the CRD's default replaces the null
    assert "nodeSelector" not in stored["spec"]["target"]


def test_a_configmap_over_one_mebibyte_is_refused_and_one_under_it_kept(http: httpx.Client) -> None:
    path = "/api/v1/namespaces/default/configmaps"
    near = {"metadata": {"name": "near"}, "data": {"results": "x" * (1024 * 1024 - 100)}}
    assert http.post(path, json=near).status_code == 201
    over = {"metadata": {"name": "over"}, "data": {"results": "x" * (1024 * 1024 + 1)}}
    r = http.post(path, json=over)
    assert causes(r) == ["[]"]
    assert "Too long: must have at most 1048576 bytes" in r.json()["message"]


def test_a_configmap_value_must_be_a_string(http: httpx.Client) -> None:
    r = http.post(
        "/api/v1/namespaces/default/configmaps", json={"metadata": {"name": "c"}, "data": {"n": 1}}
    )
    assert causes(r) == ["data[n]"]


def test_a_request_body_over_three_mebibytes_is_413(http: httpx.Client) -> None:
    huge = {"metadata": {"name": "huge"}, "data": {"results": "x" * (3 * 1024 * 1024 + 1)}}
    r = http.post("/api/v1/namespaces/default/configmaps", json=huge)
    assert (r.status_code, r.json()["reason"]) == (413, "RequestEntityTooLarge")
