"""Two operator replicas over one peering object: only the leader acts. The stand-in's
journal tells the replicas apart by the User-Agent each sends (its peering identity): every
write of the run, its pods and its nodes comes from one replica at a time, and when the leader
stops the other takes over and finishes the run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from glimmer.operator.peering import PEERING_CRDS, own_priority, peering_object
from tests.operator.conftest import (
    NS,
    RUNS,
    Operator,
    apply_peering_crds,
    apply_short_tests,
    eventually,
    journal,
    run_body,
    settled,
)
from tools.k8s_standin.cluster import StandInCluster

PEERING = "glimmer-test"
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PEERINGS = f"/apis/kopf.dev/v1/namespaces/{NS}/kopfpeerings/{PEERING}"
STEADY_PROFILE = {
    "apiVersion": "burnin.glimmer.ai/v1alpha1",
    "kind": "BurnInProfile",
    "metadata": {"name": "host-steady"},
    "spec": {
        "tests": [
            {"testRef": t} for t in ("host-kernel-and-links", "host-memory", "host-fingerprint")
        ]
    },
}


def engine_requests(cluster: StandInCluster) -> list[dict[str, Any]]:
    """The replicas' own requests (kopf's peering keep-alives and watches aside)."""
    return [
        e
        for e in journal(cluster)
        if e.get("user_agent", "").startswith("glimmer-operator/") and "kopf.dev" not in e["path"]
    ]


def peers(http: httpx.Client) -> dict[str, Any]:
    found = http.get(PEERINGS)
    return dict(found.json().get("status") or {}) if found.status_code == 200 else {}


def test_of_two_replicas_only_the_leader_acts_and_the_other_takes_over_when_it_stops(
    cluster: StandInCluster,
    http: httpx.Client,
    operators: Callable[..., Operator],
    tmp_path: Path,
) -> None:
    apply_peering_crds(http)
    apply_short_tests(http, tmp_path)
    args = ("--peering", PEERING, "--namespace", NS)
    first = operators(*args, name="first").start()
    eventually(lambda: len(peers(http)) == 1, "the first replica in the peering object")
    second = operators(*args, name="second").start()
    eventually(lambda: len(peers(http)) == 2, "both replicas in the peering object")
    # The steady host tests on both nodes at once: a run of a few seconds that is still under
    # way when the leader stops (the disk test, which needs one node at a time, is no part of
    # what is tested here).
    created = http.post(RUNS.replace("burninruns", "burninprofiles"), json=STEADY_PROFILE)
    assert created.status_code == 201, created.text
    body = run_body("led", cluster.nodes[:2], maxConcurrentNodes=2)
    body["spec"]["profileRef"] = STEADY_PROFILE["metadata"]["name"]
    assert http.post(RUNS, json=body).status_code == 201
    # Let the leader get well into the run, then stop it: the other must finish it.
    eventually(
        lambda: sum(e["method"] in WRITES for e in engine_requests(cluster)) >= 6,
        "the leader's first writes",
    )
    assert first.stop() == 0, first.output()
    run = settled(http, "led")
    assert second.stop() == 0, second.output()
    assert run["status"]["phase"] in ("Passed", "Failed"), run["status"]

    requests = engine_requests(cluster)
    agents = [e["user_agent"] for e in requests]
    leader, follower = agents[0], next(a for a in agents if a != agents[0])
    # One replica at a time: all the first's requests, then all the second's — never mixed.
    switch = agents.index(follower)
    assert set(agents[:switch]) == {leader}
    assert set(agents[switch:]) == {follower}
    assert sum(e["method"] in WRITES for e in requests[:switch]) >= 6
    assert any(e["method"] in WRITES for e in requests[switch:])


def test_a_replica_started_earlier_has_the_higher_peering_priority() -> None:
    # kopf pauses a replica that sees a live peer of a higher priority: the one leading keeps
    # leading when another starts, whatever the random tails.
    assert own_priority(started=1_000.000) > own_priority(started=1_000.001)
    assert own_priority(started=1_000.0) > own_priority(started=2_000.0)


def test_the_peering_object_is_cluster_wide_without_a_namespace() -> None:
    assert peering_object("p", None)["kind"] == "ClusterKopfPeering"
    assert peering_object("p", "ops")["kind"] == "KopfPeering"
    assert peering_object("p", "ops")["metadata"] == {"name": "p", "namespace": "ops"}
    kinds = {crd["spec"]["names"]["kind"]: crd["spec"]["scope"] for crd in PEERING_CRDS}
    assert kinds == {"ClusterKopfPeering": "Cluster", "KopfPeering": "Namespaced"}
