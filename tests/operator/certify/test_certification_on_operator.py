"""A Certification end to end through the operator (kopf in a thread over the operator's
whole registry, every certification controller on it) on a stand-in cluster whose Trainer
stand-in runs the TrainJobs on a simulated fleet: the Certification's Workflow, its Jobs, their
TrainJobs and pods, the outcome, the report — nothing written by the test but the
Certification."""

from __future__ import annotations

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
from glimmer.operator.registry import build_registry
from glimmer.operator.settings import operator_settings
from tests.operator.certify.conftest import CERTIFY, CERTIFY_CRDS, certification, eventually
from tools.k8s_standin.cluster import StandInCluster, standin_cluster
from tools.k8s_standin.journal import read
from tools.k8s_standin.trainer_fleet import TrainerFleet

NODES = ["hgx-node-0001", "hgx-node-0002"]  # the fleet's two HGX H100 hosts
CERTS = f"{CERTIFY}/namespaces/default/certifications"


@pytest.fixture
def fleet_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInCluster]:
    sim = TrainerFleet(load_topology("ai-factory"), seconds_per_job=0.05)
    with standin_cluster(
        root=tmp_path, network="host", fleet=sim, crd_dirs=(CERTIFY_CRDS,)
    ) as cluster:
        monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))  # kopf's login reads it
        monkeypatch.setenv("POD_NAMESPACE", "default")  # where NodeFingerprints live
        yield cluster


def _terminal(http: httpx.Client) -> dict[str, Any] | None:
    body: dict[str, Any] = http.get(f"{CERTS}/dcgm").json()
    for c in (body.get("status") or {}).get("conditions") or ():
        if c["type"] in ("Succeeded", "Failed") and c["status"] == "True":
            return body
    return None


def test_certification_runs_to_its_report_through_the_operator(
    fleet_cluster: StandInCluster,
) -> None:
    context = OperatorContext.over(
        KubernetesBackend(connect(fleet_cluster.kubeconfig)), "default", identity="certify-test"
    )
    runner = KopfRunner(
        ["run", "--standalone", "--namespace", "default"],
        registry=build_registry(context),
        settings=operator_settings(),
        timeout=120,
    )
    with runner, httpx.Client(base_url=fleet_cluster.url, timeout=30) as http:
        cert = certification(
            "dcgm", [{"domain": "diagnostics", "variant": "dcgm-level1"}], {"nodeNames": NODES}
        )
        made = http.post(CERTS, json=cert)
        assert made.status_code == 201, made.text
        body = eventually(lambda: _terminal(http), "the certification finished", 120)
        conditions = {c["type"]: c for c in body["status"]["conditions"]}
        assert conditions["Succeeded"]["status"] == "True", conditions
        report = http.get("/api/v1/namespaces/default/configmaps/dcgm-report").json()
        doc = json.loads(report["data"]["result.json"])
        assert doc["result"] == "PASSED" and doc["totalNodes"] == 2
        [category] = doc["categories"]
        assert sorted(n for g in category["groups"] for n in g["nodes"]) == NODES
    assert runner.exit_code == 0, runner.output[-3000:]
    created = [
        e
        for e in read(fleet_cluster.root / "journal.jsonl")
        if e["method"] == "POST" and e.get("status") == 201
    ]
    trainjobs = [e for e in created if e["path"].endswith("/trainjobs")]
    jobs = [e for e in created if e["path"].endswith("/jobs")]
    assert len(jobs) == 2 and len(trainjobs) == 2  # one each per node, none twice
