"""The CRDs of the controllers' kinds on the API stand-in: kubectl applies them, a valid object
of each kind is stored, an invalid one is refused naming the field, and what the spec says is
immutable stays as it was created. One stand-in serves the module, a namespace each test."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.certify import cluster_kind_samples as samples
from tests.k8s_api import K8sAPI, run_kubectl
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig

REPO = Path(__file__).resolve().parents[3]
PLURAL = {
    "Workflow": "workflows",
    "Job": "jobs",
    "GoodputMeasurement": "goodputmeasurements",
    "BandwidthMeasurement": "bandwidthmeasurements",
}
MERGE = {"Content-Type": "application/merge-patch+json"}


@dataclass(frozen=True)
class Served:
    api: K8sAPI
    http: httpx.Client


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One stand-in for the module (each test has a namespace of its own), the certification
    CRDs applied by the real kubectl."""
    root = tmp_path_factory.mktemp("standin")
    with api_in_thread() as running, httpx.Client(base_url=running.url, timeout=30) as http:
        config = write_kubeconfig(root / "kubeconfig", running.url)
        api = K8sAPI(running.url, config, root, root / "journal.jsonl")
        applied = run_kubectl(api, "apply", "-f", str(REPO / "deploy" / "crds-certify"))
        assert applied.returncode == 0, applied.stderr
        yield Served(api, http)


@pytest.fixture
def ns(served: Served, request: pytest.FixtureRequest) -> str:
    name = f"t-{zlib.crc32(request.node.nodeid.encode()):08x}"
    made = served.http.post(
        "/api/v1/namespaces",
        json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )
    assert made.status_code == 201, made.text
    return name


@pytest.fixture
def http(served: Served, ns: str) -> httpx.Client:
    return served.http


def _url(obj: dict[str, Any]) -> str:
    namespace = obj["metadata"]["namespace"]
    return f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{namespace}/{PLURAL[obj['kind']]}"


def _in(ns: str, obj: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["namespace"] = ns
    return obj


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


def test_kubectl_applies_every_certify_crd_and_lists_the_new_kinds(served: Served) -> None:
    resources = run_kubectl(
        served.api, "api-resources", "--api-group", "certify.glimmer.ai", "-o", "name"
    )
    assert resources.returncode == 0, resources.stderr
    assert set(resources.stdout.split()) >= {f"{p}.certify.glimmer.ai" for p in PLURAL.values()}


def test_a_valid_object_of_each_kind_is_stored_with_its_schema_defaults(
    http: httpx.Client, ns: str
) -> None:
    stored = {obj["kind"]: _create(http, _in(ns, obj)) for obj in samples.every_kind()}
    assert stored["Workflow"]["spec"]["gangScheduler"] == samples.GANG
    assert stored["BandwidthMeasurement"]["spec"]["sampleInterval"] == "60s"  # the default
    job = stored["Job"]["spec"]
    assert job["workload"]["trainJob"]["trainer"]["numNodes"] == 2
    assert job["nodeHealthMonitor"] == {"cel": {"expression": "node.spec.unschedulable == true"}}


def test_kubectl_get_shows_the_printer_columns(http: httpx.Client, ns: str, served: Served) -> None:
    _create(http, _in(ns, samples.job("j")))
    shown = run_kubectl(served.api, "get", "-n", ns, "jobs.certify.glimmer.ai", "j")
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
    http: httpx.Client,
    ns: str,
    obj: dict[str, Any],
    path: tuple[str, ...],
    value: Any,
    field: str,
) -> None:
    node = _in(ns, obj)
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    fields, _ = _refused(http.post(_url(obj), json=obj))
    assert fields == [field]


def test_a_measurement_status_float_that_is_not_a_decimal_string_is_refused(
    http: httpx.Client, ns: str
) -> None:
    bwm = _in(ns, samples.bandwidth())
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
    http: httpx.Client, ns: str, field: str, patch: dict[str, Any]
) -> None:
    job = _in(ns, samples.job())
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
    http: httpx.Client, ns: str, created_with: bool, patch: dict[str, Any]
) -> None:
    wf = _in(ns, samples.workflow(gang=created_with))
    _create(http, wf)
    _, message = _refused(_patch(http, wf, {"spec": patch}))
    assert "gangScheduler" in message
    assert _patch(http, wf, {"spec": {"orchestration": {"iterations": 2}}}).status_code == 200


def test_a_job_outcome_is_frozen_once_written(http: httpx.Client, ns: str) -> None:
    job = _in(ns, samples.job())
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
