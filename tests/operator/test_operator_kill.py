"""SIGKILL the operator at 30 random points of a run and start it again each time: no pod is
created twice (the stand-in's journal counts the POSTs), no result is lost, no node is left
cordoned or stamped, and the verdict is the one an uninterrupted run gives.

Each start is a fork of a process that has imported the operator already
(``tests/operator/operator_zygote.py``): the same ``python -m glimmer.operator run`` with the
same arguments, environment and log, without its 2 CPU seconds of imports, during which no
kill can reach anything of the operator's (it saves about two minutes of CI time)."""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.operator.conftest import (
    NS,
    PODS,
    REPO,
    RUNS,
    TERMINAL,
    apply_short_tests,
    eventually,
    get_run,
    journal,
    node,
    run_body,
    settled,
    stamps,
    validate_run,
)
from tests.operator.operator_zygote import ForkedOperator, Zygote
from tools.k8s_standin.cluster import StandInCluster

KILLS = 30
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# The host profile's tests whose verdict does not hang on a busy machine's disk speed.
STEADY = ("host-kernel-and-links", "host-memory", "host-fingerprint")


@pytest.fixture
def forked(cluster: StandInCluster) -> Iterator[ForkedOperator]:
    """One operator started by forks of a zygote with the environment Operator gives it;
    stopped, and the zygote ended, when the test ends."""
    env = {
        **os.environ,
        "KUBECONFIG": str(cluster.kubeconfig),
        "PYTHONUNBUFFERED": "1",
        "POD_NAMESPACE": NS,
    }
    zygote = Zygote(env, REPO)
    op = ForkedOperator(cluster, zygote)
    try:
        yield op
    finally:
        try:
            op.stop()
        finally:
            zygote.close()


def operator_writes(cluster: StandInCluster) -> int:
    return sum(
        1
        for e in journal(cluster)
        if e["method"] in WRITES and e.get("user_agent", "").startswith("glimmer-operator/")
    )


def steady_profile() -> dict[str, Any]:
    return {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInProfile",
        "metadata": {"name": "host-steady"},
        "spec": {"tests": [{"testRef": t} for t in STEADY]},
    }


def test_sigkill_at_30_random_points_creates_no_pod_twice_loses_nothing_strands_no_cordon(
    cluster: StandInCluster,
    http: httpx.Client,
    forked: ForkedOperator,
    tmp_path: Path,
) -> None:
    seed = int(os.environ.get("GLIMMER_KILL_SEED", time.time_ns() % 100_000))
    rng = random.Random(seed)
    apply_short_tests(http, tmp_path)
    created = http.post(RUNS.replace("burninruns", "burninprofiles"), json=steady_profile())
    assert created.status_code == 201, created.text
    before = {n: node(http, n) for n in cluster.nodes}
    body = run_body("killed", cluster.nodes)
    body["spec"]["profileRef"] = "host-steady"
    assert http.post(RUNS, json=body).status_code == 201
    op = forked
    in_flight = 0  # kills that cut into the run before its verdict
    for kill in range(KILLS):
        start = operator_writes(cluster)
        op.start()
        # A random point: during start-up, or after a random count of the operator's writes
        # (a pass cut between two of its calls), a little way into the next call.
        wanted = rng.choice([0, 1, 1, 1, 2])
        if wanted:
            eventually(
                lambda start=start, wanted=wanted: (
                    operator_writes(cluster) >= start + wanted
                    or (get_run(http, "killed").get("status") or {}).get("phase") in TERMINAL
                ),
                f"kill {kill + 1}: {wanted} writes (seed {seed})",
            )
        time.sleep(rng.uniform(0.0, 0.05 if wanted else 1.5))
        op.kill()
        in_flight += (get_run(http, "killed").get("status") or {}).get("phase") not in TERMINAL
    op.start()
    run = settled(http, "killed")
    assert op.stop() == 0, op.output()
    assert op.starts == KILLS + 1
    print(f"seed {seed}: {in_flight} of {KILLS} kills before the verdict")
    assert in_flight >= KILLS // 2, (seed, in_flight)  # the kills hit the run, not its end
    status = run["status"]
    # The same verdict as an uninterrupted run: every steady host test passes on every node.
    assert status["phase"] == "Passed", (seed, status)
    results = status["results"]
    assert sorted((r["name"], r["nodes"][0]) for r in results) == sorted(
        (t, n) for t in STEADY for n in cluster.nodes
    ), seed
    assert all(r["phase"] == "Passed" and r["metrics"] for r in results), (seed, results)
    validate_run(run)
    # No pod created twice: one POST per pod, one pod per recorded attempt.
    entries = journal(cluster)
    posts = [e for e in entries if e["method"] == "POST" and e["path"] == PODS]
    assert all(e["status"] == 201 for e in posts), (seed, Counter(e["status"] for e in posts))
    pods = http.get(PODS).json()["items"]
    attempts = [a["podName"] for r in results for a in r["attempts"]]
    assert len(posts) == len(pods) == len(attempts) == len(set(attempts)), seed
    assert {p["metadata"]["name"] for p in pods} == set(attempts), seed
    # No node left cordoned or stamped.
    for name in cluster.nodes:
        after = node(http, name)
        assert bool(after["spec"].get("unschedulable")) == bool(
            before[name]["spec"].get("unschedulable")
        ), (seed, name)
        assert stamps(after) == stamps(before[name]), (seed, name)
    assert not status.get("cordonedNodes"), seed
    assert eventually(lambda: get_run(http, "killed")["status"]["phase"] == "Passed", "stable")
