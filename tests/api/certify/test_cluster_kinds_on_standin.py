"""The CRDs of the controllers' kinds on the API stand-in: kubectl applies them, a valid object
of each kind is stored, an invalid one is refused naming the field, and what the spec says is
immutable stays as it was created."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.certify import cluster_kind_samples as samples
from tests.k8s_api import K8sAPI, Kubectl

REPO = Path(__file__).resolve().parents[3]
BASE = "/apis/certify.glimmer.ai/v1alpha1/namespaces/default"
PLURAL = {
    "Workflow": "workflows",
    "Job": "jobs",
    "GoodputMeasurement": "goodputmeasurements",
    "BandwidthMeasurement": "bandwidthmeasurements",
}
MERGE = {"Content-Type": "application/merge-patch+json"}


@pytest.fixture
def http(k8s_api: K8sAPI, kubectl: Kubectl) -> Iterator[httpx.Client]:
    applied = kubectl("apply", "-f", str(REPO / "deploy" / "crds-certify"))
    assert applied.returncode == 0, applied.stderr
    with httpx.Client(base_url=k8s_api.url, timeout=30) as client:
        yield client


def _url(obj: dict[str, Any]) -> str:
    return f"{BASE}/{PLURAL[obj['kind']]}"


def _refused(r: httpx.Response) -> tuple[list[str], str]:
    assert r.status_code == 422, r.text
    return [c["field"] for c in r.json()["details"]["causes"]], r.json()["message"]


def _create(http: httpx.Client, obj: dict[str, Any]) -> dict[str, Any]:
    r = http.post(_url(obj), json=obj)
    assert r.status_code == 201, r.text
    stored: dict[str, Any] = r.json()
    return stored


def _patch(http: httpx.Client, obj: dict[str, Any], body: Any, sub: str = "") -> httpx.Response:
    return http.patch(f"{_url(obj)}/{obj['metadata']['name']}{sub}", json=body, headers=MERGE)


def test_kubectl_applies_every_certify_crd_and_lists_the_new_kinds(
    http: httpx.Client, kubectl: Kubectl
) -> None:
    resources = kubectl("api-resources", "--api-group", "certify.glimmer.ai", "-o", "name")
    assert resources.returncode == 0, resources.stderr
    assert set(resources.stdout.split()) >= {f"{p}.certify.glimmer.ai" for p in PLURAL.values()}


def test_a_valid_object_of_each_kind_is_stored_with_its_schema_defaults(
    http: httpx.Client,
) -> None:
    stored = {obj["kind"]: _create(http, obj) for obj in samples.every_kind()}
    assert stored["Workflow"]["spec"]["gangScheduler"] == samples.GANG
    assert stored["BandwidthMeasurement"]["spec"]["sampleInterval"] == "60s"  # the default
    job = stored["Job"]["spec"]
    assert job["workload"]["trainJob"]["trainer"]["numNodes"] == 2
    assert job["nodeHealthMonitor"] == {"cel": {"expression": "node.spec.unschedulable == true"}}


def test_kubectl_get_shows_the_printer_columns(http: httpx.Client, kubectl: Kubectl) -> None:
    _create(http, samples.job("j"))
    shown = kubectl("get", "jobs.certify.glimmer.ai", "j")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split("\n")[0].split() == [
        "NAME", "SUCCEEDED", "HARDWAREFAILED", "NODES", "AGE",
    ]  # fmt: skip
    assert shown.stdout.split("\n")[1].split()[1] == "2"


@pytest.mark.parametrize(
    ("obj", "path", "value", "field"),
    [
        (samples.workflow(), ("spec", "orchestration", "iterations"), 0,
         "spec.orchestration.iterations"),
        (samples.job(), ("spec", "nodeHealthMonitor", "cel", "expression"), "",
         "spec.nodeHealthMonitor.cel.expression"),
        (samples.job(), ("spec", "stallMultiplier"), 0, "spec.stallMultiplier"),
        (samples.goodput(), ("spec", "sampleInterval"), "soon", "spec.sampleInterval"),
        (samples.bandwidth(), ("spec", "jobRef", "name"), 7, "spec.jobRef.name"),
    ],
)  # fmt: skip
def test_an_invalid_object_is_refused_naming_the_field(
    http: httpx.Client, obj: dict[str, Any], path: tuple[str, ...], value: Any, field: str
) -> None:
    node = obj
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    fields, _ = _refused(http.post(_url(obj), json=obj))
    assert fields == [field]


def test_a_measurement_status_float_that_is_not_a_decimal_string_is_refused(
    http: httpx.Client,
) -> None:
    bwm = samples.bandwidth()
    _create(http, bwm)
    results = [{"sizeBytes": 8, "algBW": "1.5", "busBW": 2.5, "samples": 1}]
    fields, _ = _refused(_patch(http, bwm, {"status": {"results": results}}, "/status"))
    assert fields == ["status.results[0].busBW"]


@pytest.mark.parametrize(
    ("field", "patch"),
    [
        ("workload", {"workload": {"trainJob": {"trainer": {"numNodes": 4}}}}),
        ("workloadMetadata", {"workloadMetadata": {"labels": {"team": "b"}}}),
        ("nodeHealthMonitor", {"nodeHealthMonitor": {"cel": {"expression": "false"}}}),
        ("bandwidthMeasurement", {"bandwidthMeasurement": {"sampleInterval": "5s"}}),
        ("bandwidthMeasurement", {"bandwidthMeasurement": None}),
        ("goodputMeasurement", {"goodputMeasurement": {"logProfileRef": "megatron-training"}}),
    ],
)
def test_what_a_job_was_created_with_cannot_change(
    http: httpx.Client, field: str, patch: dict[str, Any]
) -> None:
    job = samples.job()
    job["spec"]["workloadMetadata"] = {"labels": {"team": "a"}}
    _create(http, job)
    _, message = _refused(_patch(http, job, {"spec": patch}))
    assert field in message
    assert _patch(http, job, {"spec": {"stallMultiplier": 2}}).status_code == 200


@pytest.mark.parametrize(
    ("created_with", "patch"),
    [
        (True, {"gangScheduler": {"queue": "other-queue"}}),
        (True, {"gangScheduler": None}),
        (False, {"gangScheduler": samples.GANG}),
    ],
)
def test_a_workflows_gang_scheduling_is_fixed_in_presence_and_value(
    http: httpx.Client, created_with: bool, patch: dict[str, Any]
) -> None:
    wf = samples.workflow(gang=created_with)
    _create(http, wf)
    _, message = _refused(_patch(http, wf, {"spec": patch}))
    assert "gangScheduler" in message
    assert _patch(http, wf, {"spec": {"orchestration": {"iterations": 2}}}).status_code == 200


def test_a_job_outcome_is_frozen_once_written(http: httpx.Client) -> None:
    job = samples.job()
    _create(http, job)
    outcome = {"text": "# Avg bus bandwidth : 370.1\n", "exitCode": 0, "path": "nvlink"}
    written = _patch(http, job, {"status": {"outcome": outcome}}, "/status")
    assert written.status_code == 200, written.text
    assert written.json()["status"]["outcome"] == outcome
    again = _patch(http, job, {"status": {"outcome": {"exitCode": 1}}}, "/status")
    _, message = _refused(again)
    assert "outcome is frozen once written" in message
    failed = [{"name": "n1", "reason": "WorkloadFailed", "message": "exit 1"}]
    assert _patch(http, job, {"status": {"failedNodes": failed}}, "/status").status_code == 200
