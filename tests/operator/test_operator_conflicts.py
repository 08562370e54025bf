"""Conflicts: the stand-in answers 409 to every tenth write (the operator's, the kubelet's,
this test's own), and the run still settles correctly — the same results, one pod per attempt,
no node left cordoned or stamped, a status the CRD's schema accepts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.operator.conftest import (
    PODS,
    RUNS,
    TESTS,
    Operator,
    eventually,
    journal,
    node,
    run_body,
    settled,
    short_host_tests,
    stamps,
    validate_run,
)
from tools.k8s_standin.cluster import StandInCluster, standin_cluster

STEADY = ("host-kernel-and-links", "host-memory", "host-fingerprint")


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[StandInCluster]:
    with standin_cluster(3, tmp_path, network="host", conflict_every=10) as running:
        yield running


def create(http: httpx.Client, path: str, body: dict[str, Any]) -> None:
    """POST until it lands: this test's own writes meet the conflicts too."""

    def landed() -> bool:
        answer = http.post(path, json=body)
        assert answer.status_code in (201, 409), answer.text
        return (
            answer.status_code == 201 or http.get(f"{path}/{body['metadata']['name']}").is_success
        )

    eventually(landed, f"{body['kind']} {body['metadata']['name']} created")


def test_a_409_on_every_tenth_write_still_settles_the_run_correctly(
    cluster: StandInCluster,
    http: httpx.Client,
    operators: Callable[..., Operator],
    tmp_path: Path,
) -> None:
    for doc in short_host_tests(tmp_path):
        create(http, TESTS, doc)
    profile = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInProfile",
        "metadata": {"name": "host-steady"},
        "spec": {"tests": [{"testRef": t} for t in STEADY]},
    }
    create(http, RUNS.replace("burninruns", "burninprofiles"), profile)
    before = {n: node(http, n) for n in cluster.nodes}
    body = run_body("contested", cluster.nodes)
    body["spec"]["profileRef"] = "host-steady"
    op = operators().start()
    create(http, RUNS, body)
    run = settled(http, "contested", timeout=180)
    assert op.stop() == 0, op.output()

    conflicts = [e for e in journal(cluster) if e.get("status") == 409]
    assert conflicts, "the stand-in answered no 409"
    assert any(e.get("user_agent", "").startswith("glimmer-operator/") for e in conflicts)
    status = run["status"]
    assert status["phase"] == "Passed", status
    results = status["results"]
    assert sorted((r["name"], r["nodes"][0]) for r in results) == sorted(
        (t, n) for t in STEADY for n in cluster.nodes
    )
    assert all(r["phase"] == "Passed" and len(r["attempts"]) == 1 for r in results), results
    validate_run(run)
    pods = http.get(PODS).json()["items"]
    assert {p["metadata"]["name"] for p in pods} == {
        a["podName"] for r in results for a in r["attempts"]
    }
    for name in cluster.nodes:
        after = node(http, name)
        assert bool(after["spec"].get("unschedulable")) == bool(
            before[name]["spec"].get("unschedulable")
        )
        assert stamps(after) == stamps(before[name])
