"""A Certification end to end through the operator (kopf in a thread over the operator's
whole registry, every certification controller on it) on a stand-in cluster whose Trainer
stand-in runs the TrainJobs on a simulated fleet: the Certification's Workflow, its Jobs, their
TrainJobs and pods, the outcome, the report — nothing written by the test but the
Certification."""

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
from glimmer.backends.sim.certify.substrate import TwinSubstrate
from glimmer.certify.attribution import read_failed_nodes, read_succeeded_nodes
from glimmer.certify.run import certify
from glimmer.certify.spec import from_text
from glimmer.fleet.load import load_topology
from glimmer.operator.context import OperatorContext
from glimmer.operator.registry import build_registry
from glimmer.operator.settings import operator_settings
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim
from tests.operator.certify.conftest import CERTIFY, CERTIFY_CRDS, certification, eventually
from tools.k8s_standin.cluster import StandInCluster, standin_cluster
from tools.k8s_standin.journal import read
from tools.k8s_standin.trainer_fleet import TrainerFleet

NODES = ["hgx-node-0001", "hgx-node-0002"]  # the fleet's two HGX H100 hosts
CERTS = f"{CERTIFY}/namespaces/default/certifications"


def _fleet_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faults: list[Fault]
) -> contextlib.AbstractContextManager[StandInCluster]:
    monkeypatch.setenv("POD_NAMESPACE", "default")  # where NodeFingerprints live
    sim = TrainerFleet(load_topology("ai-factory"), faults, seconds_per_job=0.05)
    return standin_cluster(root=tmp_path, network="host", fleet=sim, crd_dirs=(CERTIFY_CRDS,))


@contextlib.contextmanager
def _operator(cluster: StandInCluster, monkeypatch: pytest.MonkeyPatch) -> Iterator[KopfRunner]:
    """The operator's whole registry under kopf, in a thread, serving ``default``."""
    monkeypatch.setenv("KUBECONFIG", str(cluster.kubeconfig))  # kopf's login reads it
    context = OperatorContext.over(
        KubernetesBackend(connect(cluster.kubeconfig)), "default", identity="certify-test"
    )
    runner = KopfRunner(
        ["run", "--standalone", "--namespace", "default"],
        registry=build_registry(context),
        settings=operator_settings(),
        timeout=120,
    )
    with runner:
        yield runner
    assert runner.exit_code == 0, runner.output[-3000:]


@pytest.fixture
def fleet_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInCluster]:
    with _fleet_cluster(tmp_path, monkeypatch, []) as cluster:
        yield cluster


def _terminal(http: httpx.Client, name: str) -> dict[str, Any] | None:
    body: dict[str, Any] = http.get(f"{CERTS}/{name}").json()
    for c in (body.get("status") or {}).get("conditions") or ():
        if c["type"] in ("Succeeded", "Failed") and c["status"] == "True":
            return body
    return None


def test_certification_runs_to_its_report_through_the_operator(
    fleet_cluster: StandInCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        _operator(fleet_cluster, monkeypatch),
        httpx.Client(base_url=fleet_cluster.url, timeout=30) as http,
    ):
        cert = certification(
            "dcgm", [{"domain": "diagnostics", "variant": "dcgm-level1"}], {"nodeNames": NODES}
        )
        made = http.post(CERTS, json=cert)
        assert made.status_code == 201, made.text
        body = eventually(lambda: _terminal(http, "dcgm"), "the certification finished", 120)
        conditions = {c["type"]: c for c in body["status"]["conditions"]}
        assert conditions["Succeeded"]["status"] == "True", conditions
        report = http.get("/api/v1/namespaces/default/configmaps/dcgm-report").json()
        doc = json.loads(report["data"]["result.json"])
        assert doc["result"] == "PASSED" and doc["totalNodes"] == 2
        [category] = doc["categories"]
        assert sorted(n for g in category["groups"] for n in g["nodes"]) == NODES
    created = [
        e
        for e in read(fleet_cluster.root / "journal.jsonl")
        if e["method"] == "POST" and e.get("status") == 201
    ]
    trainjobs = [e for e in created if e["path"].endswith("/trainjobs")]
    jobs = [e for e in created if e["path"].endswith("/jobs")]
    assert len(jobs) == 2 and len(trainjobs) == 2  # one each per node, none twice


GB200 = ["nvl-node-0004", "nvl-node-0005", "nvl-node-0006", "nvl-node-0007"]
ROW_REMAP = Fault("gpu_row_remap", "gpu:nvl-node-0005/1")


def test_a_planted_gpu_fault_is_named_on_the_cluster_as_the_simulator_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One core, two substrates: DCGM level 2 over four GB200 hosts, one with a GPU whose row
    remapping fails; the cluster's report and node-result ConfigMaps name exactly the node and
    reason the direct run on the simulator does."""
    cert = certification(
        "diag", [{"domain": "diagnostics", "variant": "dcgm-level2"}], {"nodeNames": GB200}
    )
    with (
        _fleet_cluster(tmp_path, monkeypatch, [ROW_REMAP]) as cluster,
        _operator(cluster, monkeypatch),
        httpx.Client(base_url=cluster.url, timeout=30) as http,
    ):
        assert http.post(CERTS, json=cert).status_code == 201
        body = eventually(lambda: _terminal(http, "diag"), "the certification finished", 120)
        cms = "/api/v1/namespaces/default/configmaps"
        doc = json.loads(http.get(f"{cms}/diag-report").json()["data"]["result.json"])
        [status] = body["status"]["categoryStatuses"]
        failed_cm = http.get(f"{cms}/{status['failedNodesRef']['name']}").json()
        succeeded_cm = http.get(f"{cms}/{status['succeededNodesRef']['name']}").json()
    failed = read_failed_nodes(base64.b64decode(failed_cm["binaryData"]["failed-nodes.json.gz"]))
    healthy = read_succeeded_nodes(
        base64.b64decode(succeeded_cm["binaryData"]["succeeded-nodes.csv.gz"])
    )
    assert [f.name for f in failed] == ["nvl-node-0005"]
    assert healthy == ["nvl-node-0004", "nvl-node-0006", "nvl-node-0007"]
    direct = certify(
        TwinSubstrate(FleetSim(load_topology("ai-factory"), [ROW_REMAP])),
        from_text(json.dumps(cert)),
        seed=0,
    )
    [on_sim] = direct.categories
    [on_cluster] = doc["categories"]
    assert doc["result"] == direct.result == "FAILED"
    assert [(f["name"], f["reason"], f["message"]) for f in on_cluster["failedNodeReasons"]] == [
        (f.name, f.reason, f.message) for f in on_sim.failed_nodes
    ]
    assert "row remapping" in on_cluster["failedNodeReasons"][0]["message"]
