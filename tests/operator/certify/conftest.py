"""Fixtures of the certification controllers' tests: an API stand-in serving the burn-in and
the certification CRDs (no kubelet: most tests finish a Job by writing its ``status.outcome``
by hand, as the Job controller would), GPU Nodes as GPU feature discovery labels them, and
helpers to read and write objects over HTTP.

Helper E (the Job controller) appends its fixtures below the marked line; the part above it
belongs to the Certification, Workflow and WorkloadRun controllers' tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from lightkube import Client

from glimmer.backends.kubernetes.client import connect
from glimmer.operator.certify.certification import CertificationController
from glimmer.operator.certify.workflow import WorkflowController
from glimmer.operator.certify.workflow_cluster import Cluster
from glimmer.operator.certify.workloadrun import WorkloadRunController
from tools.k8s_standin.api import GLIMMER_CRDS
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig

REPO = Path(__file__).resolve().parents[3]
CERTIFY_CRDS = REPO / "deploy" / "crds-certify"
# Kubeflow Trainer's own CRDs (the schemas every TrainJob and TrainingRuntime write is checked
# against), beside the repository as the Trainer stand-in reads them.
TRAINER_CRDS = REPO.parent / "shared" / "schemas" / "kubeflow-trainer"
NS = "default"
CERTIFY = "/apis/certify.glimmer.ai/v1alpha1"
H100 = "NVIDIA-H100-80GB-HBM3"
GB200 = "NVIDIA-GB200"


@dataclass(frozen=True)
class CertifyAPI:
    """An API stand-in with the certification kinds: where it is and a client of it."""

    url: str
    kubeconfig: Path
    root: Path  # the test's tmp_path (the Operator helper writes its logs here)
    http: httpx.Client
    client: Client

    def path(self, plural: str, name: str = "", namespace: str = NS) -> str:
        """The path of a certify.glimmer.ai object (or its collection)."""
        tail = f"/{name}" if name else ""
        return f"{CERTIFY}/namespaces/{namespace}/{plural}{tail}"

    def get(self, plural: str, name: str, namespace: str = NS) -> dict[str, Any] | None:
        got = self.http.get(self.path(plural, name, namespace))
        if got.status_code == 404:
            return None
        assert got.status_code == 200, got.text
        body: dict[str, Any] = got.json()
        return body

    def create(self, plural: str, body: Mapping[str, Any], namespace: str = NS) -> dict[str, Any]:
        made = self.http.post(self.path(plural, namespace=namespace), json=dict(body))
        assert made.status_code == 201, made.text
        out: dict[str, Any] = made.json()
        return out

    def items(self, plural: str, selector: str = "", namespace: str = NS) -> list[dict[str, Any]]:
        params = {"labelSelector": selector} if selector else {}
        got = self.http.get(self.path(plural, namespace=namespace), params=params)
        assert got.status_code == 200, got.text
        found: list[dict[str, Any]] = got.json()["items"]
        return found

    def configmap(self, name: str, namespace: str = NS) -> dict[str, Any] | None:
        got = self.http.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
        if got.status_code == 404:
            return None
        assert got.status_code == 200, got.text
        body: dict[str, Any] = got.json()
        return body

    def events(self, namespace: str = NS) -> list[dict[str, Any]]:
        got = self.http.get(f"/api/v1/namespaces/{namespace}/events")
        assert got.status_code == 200, got.text
        found: list[dict[str, Any]] = got.json()["items"]
        return found


@pytest.fixture
def certify_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CertifyAPI]:
    """A fresh API stand-in with every glimmer CRD and Trainer's, in a thread; its kubeconfig
    in $KUBECONFIG."""
    with api_in_thread(
        crd_dirs=(GLIMMER_CRDS, CERTIFY_CRDS, TRAINER_CRDS), journal=tmp_path / "journal.jsonl"
    ) as running:
        config = write_kubeconfig(tmp_path / "kubeconfig", running.url, NS)
        monkeypatch.setenv("KUBECONFIG", str(config))
        with httpx.Client(base_url=running.url, timeout=30) as http:
            yield CertifyAPI(running.url, config, tmp_path, http, connect(config))


def gpu_node(
    name: str,
    product: str = H100,
    gpus: int = 8,
    labels: Mapping[str, str] | None = None,
    *,
    provider_id: str = "",
    unschedulable: bool = False,
    taints: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """A Node as GPU feature discovery and the device plugin leave it."""
    spec: dict[str, Any] = {}
    if provider_id:
        spec["providerID"] = provider_id
    if unschedulable:
        spec["unschedulable"] = True
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.product": product,
                **(labels or {}),
            },
        },
        "spec": spec,
        "status": {
            "allocatable": {"nvidia.com/gpu": str(gpus), "cpu": "128", "memory": "1Ti"},
            "capacity": {"nvidia.com/gpu": str(gpus), "cpu": "128", "memory": "1Ti"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def add_nodes(api: CertifyAPI, nodes: Sequence[Mapping[str, Any]]) -> None:
    for node in nodes:
        made = api.http.post("/api/v1/nodes", json=dict(node))
        assert made.status_code == 201, made.text


def h100_nodes(count: int, prefix: str = "gpu") -> list[dict[str, Any]]:
    """``count`` H100 nodes, two to a rack."""
    return [
        gpu_node(f"{prefix}-{i:02d}", labels={"rack": f"rack-{i // 2}"})
        for i in range(1, count + 1)
    ]


def eventually(check: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    """Poll until ``check`` returns something truthy; the timeout only bounds a broken run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.05)
    raise AssertionError(f"never happened within {timeout} s: {what}")


def condition(body: Mapping[str, Any] | None, kind: str) -> dict[str, Any] | None:
    """The condition ``kind`` of an object's status, or None."""
    for c in ((body or {}).get("status") or {}).get("conditions") or ():
        if c.get("type") == kind:
            found: dict[str, Any] = c
            return found
    return None


def is_true(body: Mapping[str, Any] | None, kind: str) -> bool:
    c = condition(body, kind)
    return bool(c and c.get("status") == "True")


def finish_job(
    api: CertifyAPI,
    job: Mapping[str, Any],
    *,
    text: str = "",
    exit_code: int = 0,
    error: str = "",
    path: str = "",
    crashed_on: Sequence[str] = (),
    elapsed: float = 0.0,
    hardware_failed: Sequence[str] = (),
    validation_failed: bool = False,
) -> None:
    """Write what the Job controller writes when its workload ends: the frozen outcome and the
    terminal condition (HardwareFailed and the failed nodes when ``hardware_failed`` names some)."""
    name = job["metadata"]["name"]
    namespace = job["metadata"].get("namespace") or NS
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    done = "Succeeded" if exit_code == 0 and not hardware_failed else "Failed"
    if validation_failed:
        done = "Failed"
    conditions = [
        {"type": t, "status": "True" if t == done else "False", "reason": done,
         "message": done, "lastTransitionTime": now}
        for t in ("InProgress", "Succeeded", "Failed")
    ]  # fmt: skip
    status: dict[str, Any] = {
        "conditions": conditions,
        "outcome": {
            "text": text,
            "exitCode": exit_code,
            "error": error,
            "path": path,
            "crashedOn": list(crashed_on),
            "elapsedSeconds": elapsed,
        },
    }
    if hardware_failed:
        conditions.append(
            {"type": "HardwareFailed", "status": "True", "reason": "HardwareFailureDetected",
             "message": "node unhealthy", "lastTransitionTime": now}
        )  # fmt: skip
        status["failedNodes"] = [
            {"name": n, "reason": "HardwareFailureDetected", "message": "node unhealthy"}
            for n in hardware_failed
        ]
    if validation_failed:
        conditions.append(
            {"type": "ValidationFailed", "status": "True", "reason": "ThresholdViolation",
             "message": "busBandwidthGBps >= 400.0 failed", "lastTransitionTime": now}
        )  # fmt: skip
    fresh = api.get("jobs", name, namespace) or dict(job)  # another controller may have written
    body = {**fresh, "status": {**(fresh.get("status") or {}), **status}}
    put = api.http.put(api.path("jobs", name, namespace) + "/status", json=body)
    assert put.status_code == 200, put.text


CERTIFY_API_VERSION = "certify.glimmer.ai/v1alpha1"
TERMINAL = ("Succeeded", "Failed")


def certification(
    name: str,
    categories: Sequence[Mapping[str, Any]],
    target: Mapping[str, Any] | None = None,
    namespace: str = NS,
    **options: Any,
) -> dict[str, Any]:
    """A Certification of ``categories`` (``{"domain", "variant", "options"?}``) over
    ``target`` (every H100 node when None), with spec-level ``options``."""
    return {
        "apiVersion": CERTIFY_API_VERSION,
        "kind": "Certification",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "target": dict(target or {"nodeSelector": {"nvidia.com/gpu.product": H100}}),
            "categories": [dict(c) for c in categories],
            **options,
        },
    }


class CertClock:
    """The operator's clock for the controllers under test, moved by hand."""

    def __init__(self) -> None:
        self.at = datetime.now(UTC)

    def now(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@dataclass(frozen=True)
class Controllers:
    """The Certification, Workflow and WorkloadRun controllers over one API stand-in, called
    directly (no kopf): each test drives the reconciles and plays the Job controller."""

    api: CertifyAPI
    clock: CertClock
    certification: CertificationController
    workflow: WorkflowController
    workloadrun: WorkloadRunController


@pytest.fixture
def controllers(certify_api: CertifyAPI) -> Controllers:
    clock = CertClock()
    cluster = Cluster(certify_api.client)
    return Controllers(
        certify_api,
        clock,
        CertificationController(cluster, clock.now, poll=0.0),
        WorkflowController(cluster, clock.now, poll=0.0),
        WorkloadRunController(cluster, clock.now, poll=0.0),
    )


Outcome = Callable[[Mapping[str, Any]], Mapping[str, Any]]


def passing(_job: Mapping[str, Any]) -> Mapping[str, Any]:
    return {}


def finish_open_jobs(api: CertifyAPI, workflow: str, outcome: Outcome, namespace: str = NS) -> int:
    """Finish every Job of ``workflow`` still without an outcome, as ``outcome(job)`` says
    (keyword arguments of :func:`finish_job`); how many were finished."""
    done = 0
    for job in api.items("jobs", f"certify.glimmer.ai/workflow={workflow}", namespace):
        if not (job.get("status") or {}).get("outcome"):
            finish_job(api, job, **outcome(job))
            done += 1
    return done


def run_workflow(
    ctl: Controllers, name: str, outcome: Outcome = passing, namespace: str = NS
) -> dict[str, Any]:
    """Reconcile Workflow ``name`` until terminal, finishing its Jobs as ``outcome`` says."""
    for _ in range(200):
        ctl.workflow.reconcile(namespace, name)
        body = ctl.api.get("workflows", name, namespace)
        if body is None or any(is_true(body, t) for t in TERMINAL):
            assert body is not None, f"Workflow {name} vanished"
            return body
        finish_open_jobs(ctl.api, name, outcome, namespace)
    raise AssertionError(f"Workflow {name} never finished")


def run_certification(
    ctl: Controllers, name: str, outcome: Outcome = passing, namespace: str = NS
) -> dict[str, Any]:
    """Reconcile Certification ``name`` and every Workflow it creates until it is terminal."""
    for _ in range(50):
        ctl.certification.reconcile(namespace, name)
        body = ctl.api.get("certifications", name, namespace)
        assert body is not None, f"Certification {name} vanished"
        if any(is_true(body, t) for t in TERMINAL):
            return body
        for cat in (body.get("status") or {}).get("categoryStatuses") or ():
            ref = cat.get("workflowRef") or {}
            if cat.get("status") == "InProgress" and ref.get("name"):
                run_workflow(ctl, ref["name"], outcome, namespace)
    raise AssertionError(f"Certification {name} never finished")


# ---- helper E's fixtures below (append-only) -------------------------------------------------


class JobClock:
    """A cluster clock a test moves by hand (the Job controller reads ``now`` from it)."""

    def __init__(self) -> None:
        from datetime import UTC, datetime

        self.at = datetime(2026, 12, 2, 3, 0, 0, tzinfo=UTC)

    def now(self) -> Any:
        return self.at

    def advance(self, seconds: float) -> None:
        from datetime import timedelta

        self.at += timedelta(seconds=seconds)


@dataclass(frozen=True)
class JobAPI:
    """An API stand-in for the Job and measurement controllers' tests: the certify CRDs, a
    permissive TrainJob CRD when no Trainer CRD is in the repository, pod logs served from
    ``log_dir`` (written by the test, as a kubelet would), pods deleted at once."""

    url: str
    kubeconfig: Path
    root: Path
    log_dir: Path
    http: httpx.Client
    client: Client

    def certify(self, plural: str, name: str = "", namespace: str = NS) -> str:
        tail = f"/{name}" if name else ""
        return f"{CERTIFY}/namespaces/{namespace}/{plural}{tail}"

    def trainer(self, plural: str, name: str = "", namespace: str = NS) -> str:
        tail = f"/{name}" if name else ""
        return f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/{plural}{tail}"

    def read(self, path: str) -> dict[str, Any] | None:
        got = self.http.get(path)
        if got.status_code == 404:
            return None
        assert got.status_code == 200, got.text
        body: dict[str, Any] = got.json()
        return body

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        made = self.http.post(path, json=dict(body))
        assert made.status_code == 201, made.text
        out: dict[str, Any] = made.json()
        return out

    def put_status(self, path: str, status: Mapping[str, Any]) -> dict[str, Any]:
        body = self.read(path)
        assert body is not None, path
        body["status"] = dict(status)
        put = self.http.put(f"{path}/status", json=body)
        assert put.status_code == 200, put.text
        out: dict[str, Any] = put.json()
        return out

    def write_log(self, pod: str, text: str, namespace: str = NS) -> None:
        folder = self.log_dir / namespace
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{pod}.log").write_text(text)


@pytest.fixture
def job_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JobAPI]:
    from tests.backends.kubernetes.certify.standin_crds import crd_dirs
    from tools.k8s_standin.trainer import TRAINER_CRDS

    log_dir = tmp_path / "pod-logs"
    log_dir.mkdir()
    with api_in_thread(
        crd_dirs=crd_dirs(tmp_path, (TRAINER_CRDS,)), log_dir=log_dir, graceful_pod_deletion=False
    ) as running:
        config = write_kubeconfig(tmp_path / "kubeconfig", running.url, NS)
        monkeypatch.setenv("KUBECONFIG", str(config))
        with httpx.Client(base_url=running.url, timeout=30) as http:
            yield JobAPI(running.url, config, tmp_path, log_dir, http, connect(config))
