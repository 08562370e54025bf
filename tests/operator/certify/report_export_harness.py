"""What the report-export tests share (test_report_export_*): finished Certifications with
their reports on the API stand-in, a Secret holding the bearer token, policies, a real HTTP
receiver on loopback (tests/sinks/receiver.py), a clock the test moves by hand, and a drive
that reconciles an export until it has to wait (the test then moves the clock: no backoff is
ever slept through, no assertion is made on wall time).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pytest

from glimmer.operator.certify.report_export import ExportController
from glimmer.operator.certify.report_export_policy import PolicyController
from glimmer.operator.certify.workflow_cluster import Cluster
from tests.operator.certify.conftest import NS, CertifyAPI, JobClock
from tests.sinks.receiver import Receiver

TOKEN = "s3cr3t-bearer-token-value"
CLUSTER_ID = "0d1e2f3a-cluster-uid"
POLICY = "to-fleetdb"


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def report_doc(name: str) -> dict[str, Any]:
    """A report as the Certification controller leaves it (its content is opaque here)."""
    return {
        "certification": name,
        "categories": [{"domain": "communication", "variant": "nccl-all-reduce", "status": "Ok"}],
        "nodes": {"passed": ["node-a", "node-b"], "failed": []},
    }


def finished_certification(
    api: CertifyAPI,
    name: str,
    at: datetime,
    *,
    namespace: str = NS,
    labels: Mapping[str, str] | None = None,
    outcome: str = "Succeeded",
    report: bool = True,
) -> dict[str, Any]:
    """A Certification that became ``outcome`` at ``at``, with its ``<name>-report``."""
    made = api.create(
        "certifications",
        {
            "apiVersion": "certify.glimmer.ai/v1alpha1",
            "kind": "Certification",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
            "spec": {
                "target": {"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
                "categories": [{"domain": "communication", "variant": "nccl-all-reduce"}],
            },
        },
        namespace,
    )
    conditions = [
        {
            "type": kind,
            "status": "True" if kind == outcome else "False",
            "reason": "AllWorkflowsSucceeded" if outcome == "Succeeded" else "WorkflowFailed",
            "message": "done",
            "lastTransitionTime": stamp(at),
        }
        for kind in ("InProgress", "Succeeded", "Failed")
    ]
    made["status"] = {"conditions": conditions}
    put = api.http.put(f"{api.path('certifications', name, namespace)}/status", json=made)
    assert put.status_code == 200, put.text
    if report:
        configmap(api, f"{name}-report", {"result.json": json.dumps(report_doc(name))}, namespace)
    body: dict[str, Any] = put.json()
    return body


def configmap(api: CertifyAPI, name: str, data: Mapping[str, str], namespace: str = NS) -> None:
    made = api.http.post(
        f"/api/v1/namespaces/{namespace}/configmaps",
        json={"metadata": {"name": name, "namespace": namespace}, "data": dict(data)},
    )
    assert made.status_code == 201, made.text


def token_secret(api: CertifyAPI, name: str = "fleetdb-token", value: str = TOKEN) -> None:
    made = api.http.post(
        f"/api/v1/namespaces/{NS}/secrets",
        json={
            "metadata": {"name": name, "namespace": NS},
            "data": {"token": base64.b64encode(value.encode()).decode()},
        },
    )
    assert made.status_code == 201, made.text


def namespace(api: CertifyAPI, name: str) -> None:
    made = api.http.post("/api/v1/namespaces", json={"metadata": {"name": name}})
    assert made.status_code == 201, made.text


def policy(
    api: CertifyAPI,
    url: str,
    *,
    name: str = POLICY,
    namespaces: tuple[str, ...] = (NS,),
    selector: Mapping[str, Any] | None = None,
    retry: Mapping[str, Any] | None = None,
    retention: Mapping[str, Any] | None = None,
    suspend: bool = False,
    token: bool = True,
) -> dict[str, Any]:
    webhook: dict[str, Any] = {"url": url}
    if token:
        webhook["bearerTokenSecretRef"] = {"name": "fleetdb-token", "key": "token"}
    spec: dict[str, Any] = {
        "source": {"kind": "Certification", "namespaces": list(namespaces)},
        "webhook": webhook,
        "suspend": suspend,
    }
    if selector is not None:
        spec["source"]["selector"] = dict(selector)
    if retry is not None:
        spec["retry"] = dict(retry)
    if retention is not None:
        spec["retention"] = dict(retention)
    return api.create(
        "reportexportpolicies",
        {
            "apiVersion": "certify.glimmer.ai/v1alpha1",
            "kind": "ReportExportPolicy",
            "metadata": {"name": name, "namespace": NS},
            "spec": spec,
        },
    )


@dataclass
class Exports:
    """The two controllers over one stand-in, one clock and one receiver."""

    api: CertifyAPI
    clock: JobClock
    receiver: Receiver
    allow_plain_http: bool = True
    cluster: Cluster = field(init=False)
    policies: PolicyController = field(init=False)
    exports: ExportController = field(init=False)

    def __post_init__(self) -> None:
        self.cluster = Cluster(self.api.client)
        self.restart()

    def restart(self, *, allow_plain_http: bool | None = None) -> None:
        """New controllers (an operator restart): nothing carried over but what the API holds."""
        if allow_plain_http is not None:
            self.allow_plain_http = allow_plain_http
        self.policies = PolicyController(self.cluster, self.clock.now, lambda: CLUSTER_ID)
        self.exports = ExportController(
            self.cluster, self.clock.now, allow_plain_http=self.allow_plain_http
        )

    def register(self, name: str = POLICY) -> list[dict[str, Any]]:
        """One policy reconcile; every ReportExport in the namespace after it."""
        self.policies.reconcile(NS, name)
        return self.api.items("reportexports")

    def export(self, name: str) -> dict[str, Any]:
        body = self.api.get("reportexports", name)
        assert body is not None, f"ReportExport {name} is gone"
        return body

    def status(self, name: str) -> dict[str, Any]:
        status: dict[str, Any] = self.export(name).get("status") or {}
        return status

    def drive(self, name: str, steps: int = 20) -> float | None:
        """Reconcile until the export is finished or waits for time to pass: the wait."""
        for _ in range(steps):
            wait = self.exports.reconcile(NS, name)
            if wait is None or wait > 0:
                return wait
        raise AssertionError(f"ReportExport {name} never settled in {steps} reconciles")

    def patch_spec(self, name: str, spec: Mapping[str, Any]) -> dict[str, Any]:
        got = self.api.http.patch(
            self.api.path("reportexports", name),
            json={"spec": dict(spec)},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert got.status_code == 200, got.text
        body: dict[str, Any] = got.json()
        return body


def one_export(ex: Exports, **retry: object) -> str:
    """Certification ``cert-a`` finished now, a policy with ``retry`` (the defaults when none)
    and the one ReportExport it registers: its name."""
    finished_certification(ex.api, "cert-a", ex.clock.now())
    policy(ex.api, ex.receiver.url, retry=retry or None)
    [made] = ex.register()
    name: str = made["metadata"]["name"]
    return name


def sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    try:
        yield r
    finally:
        r.stop()


@pytest.fixture
def exports(certify_api: CertifyAPI, receiver: Receiver) -> Exports:
    token_secret(certify_api)
    return Exports(certify_api, JobClock(), receiver)
