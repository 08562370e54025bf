"""The operator's defaults: every namespace, and leader election through the cluster-wide
peering object it creates itself (``glimmer-operator``) — a run outside ``default`` settles."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from glimmer.operator.peering import DEFAULT_PEERING
from tests.operator.conftest import (
    TESTS,
    Operator,
    apply_peering_crds,
    eventually,
    run_body,
    short_host_tests,
)
from tools.k8s_standin.cluster import StandInCluster

OTHER = "burn-in"
RUNS = f"/apis/burnin.glimmer.ai/v1alpha1/namespaces/{OTHER}/burninruns"
CLUSTER_PEERING = f"/apis/kopf.dev/v1/clusterkopfpeerings/{DEFAULT_PEERING}"


def test_by_default_the_operator_serves_every_namespace_as_an_elected_leader(
    cluster: StandInCluster,
    http: httpx.Client,
    operators: Callable[..., Operator],
    tmp_path: Path,
) -> None:
    apply_peering_crds(http)
    made = http.post("/api/v1/namespaces", json={"metadata": {"name": OTHER}})
    assert made.status_code in (201, 409), made.text
    for doc in short_host_tests(tmp_path):
        if doc["metadata"]["name"] == "host-fingerprint":
            made = http.post(TESTS.replace("/default/", f"/{OTHER}/"), json=doc)
            assert made.status_code == 201, made.text
    profile = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInProfile",
        "metadata": {"name": "identity"},
        "spec": {"tests": [{"testRef": "host-fingerprint"}]},
    }
    assert http.post(RUNS.replace("burninruns", "burninprofiles"), json=profile).is_success
    op = operators("--all-namespaces").start()
    body = run_body("elsewhere", cluster.nodes[:1])
    body["spec"]["profileRef"] = "identity"
    assert http.post(RUNS, json=body).status_code == 201

    def phase() -> str:
        return str((http.get(f"{RUNS}/elsewhere").json().get("status") or {}).get("phase"))

    assert eventually(lambda: phase() in ("Passed", "Failed", "Error"), "settled") and (
        phase() == "Passed"
    )
    peers = http.get(CLUSTER_PEERING).json().get("status") or {}
    assert len(peers) == 1  # this replica, leading through the peering object it created
    assert op.stop() == 0, op.output()
