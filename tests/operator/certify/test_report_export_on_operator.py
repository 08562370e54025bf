"""A Certification's report exported end to end through the operator (kopf in a thread over the
operator's whole registry, started with plain http allowed) on a stand-in cluster whose Trainer
stand-in runs the TrainJobs: the Certification runs to its report, the policy registers one
ReportExport, which delivers the report to a receiver on loopback — nothing written by the test
but the Secret, the policy and the Certification."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from kopf.testing import KopfRunner

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.fleet.load import load_topology
from glimmer.operator.context import OperatorContext
from glimmer.operator.registry import assemble
from glimmer.operator.settings import operator_settings
from tests.operator.certify.conftest import CERTIFY, CERTIFY_CRDS, certification, eventually
from tests.operator.certify.report_export_harness import TOKEN, receiver, sha256
from tests.sinks.receiver import Receiver
from tools.k8s_standin.cluster import StandInCluster, standin_cluster
from tools.k8s_standin.trainer_fleet import TrainerFleet

__all__ = ["receiver"]  # the fixture these tests use

NODES = ["hgx-node-0001", "hgx-node-0002"]
BASE = f"{CERTIFY}/namespaces/default"


@contextlib.contextmanager
def _operator(cluster: StandInCluster, monkeypatch: pytest.MonkeyPatch) -> Iterator[KopfRunner]:
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))  # kopf's login reads it
    monkeypatch.setenv("POD_NAMESPACE", "default")
    context = OperatorContext.over(
        KubernetesBackend(connect(cluster.kubeconfig)), "default", identity="export-test"
    )
    registry, _ = assemble(context, allow_plain_http_exports=True)
    runner = KopfRunner(
        ["run", "--standalone", "--namespace", "default"],
        registry=registry,
        settings=operator_settings(),
        timeout=120,
    )
    with runner:
        yield runner
    assert runner.exit_code == 0, runner.output[-3000:]


def _finished_export(http: httpx.Client) -> dict[str, Any] | None:
    items: list[dict[str, Any]] = http.get(f"{BASE}/reportexports").json()["items"]
    done = [e for e in items if (e.get("status") or {}).get("phase") in ("Succeeded", "Failed")]
    return done[0] if done else None


def test_a_certification_run_on_the_cluster_is_exported_to_the_receiver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    sim = TrainerFleet(load_topology("ai-factory"), [], seconds_per_job=0.05)
    with (
        standin_cluster(root=tmp_path, network="host", fleet=sim, crd_dirs=(CERTIFY_CRDS,)) as c,
        _operator(c, monkeypatch),
        httpx.Client(base_url=c.url, timeout=30) as http,
    ):
        secret = {
            "metadata": {"name": "fleetdb-token", "namespace": "default"},
            "data": {"token": base64.b64encode(TOKEN.encode()).decode()},
        }
        assert http.post("/api/v1/namespaces/default/secrets", json=secret).status_code == 201
        rep = {
            "apiVersion": "certify.glimmer.ai/v1alpha1",
            "kind": "ReportExportPolicy",
            "metadata": {"name": "to-fleetdb", "namespace": "default"},
            "spec": {
                "source": {"namespaces": ["default"]},
                "webhook": {
                    "url": receiver.url,
                    "bearerTokenSecretRef": {"name": "fleetdb-token", "key": "token"},
                },
            },
        }
        assert http.post(f"{BASE}/reportexportpolicies", json=rep).status_code == 201
        cert = certification(
            "dcgm", [{"domain": "diagnostics", "variant": "dcgm-level1"}], {"nodeNames": NODES}
        )
        assert http.post(f"{BASE}/certifications", json=cert).status_code == 201
        export = eventually(lambda: _finished_export(http), "the report was exported", 120)
        report = http.get("/api/v1/namespaces/default/configmaps/dcgm-report").json()
        made = http.get(f"{BASE}/certifications/dcgm").json()
        kube_system = http.get("/api/v1/namespaces/kube-system").json()
    status = export["status"]
    assert (status["phase"], status["attempts"], status["result"]) == ("Succeeded", 1, "Succeeded")
    [seen] = receiver.requests
    assert sha256(seen.body) == status["sha256"]
    doc = json.loads(seen.body)
    assert doc["report"] == json.loads(report["data"]["result.json"])
    assert doc["report"]["result"] == "PASSED"
    assert doc["clusterID"] == kube_system["metadata"]["uid"] == export["spec"]["clusterID"]
    assert doc["reportID"] == made["metadata"]["uid"] == seen.headers["Idempotency-Key"]
    assert seen.headers["Authorization"] == f"Bearer {TOKEN}"
    assert export["spec"]["sourceRef"]["name"] == "dcgm"
