"""Deleting a BurnInRun while it runs: the engine's deleted path, driven by the operator —
its load stopped, its node released and unstamped, its finalizer dropped, and the run gone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from glimmer.engine.keys import FINALIZER
from tests.operator.conftest import (
    PODS,
    RUNS,
    Operator,
    apply_short_tests,
    eventually,
    get_run,
    node,
    run_body,
    stamps,
)
from tools.k8s_standin.cluster import StandInCluster


def test_a_run_deleted_mid_test_releases_its_node_and_goes(
    cluster: StandInCluster,
    http: httpx.Client,
    operators: Callable[..., Operator],
    tmp_path: Path,
) -> None:
    apply_short_tests(http, tmp_path)
    target = cluster.nodes[0]
    before = node(http, target)
    op = operators().start()
    assert http.post(RUNS, json=run_body("doomed", [target])).status_code == 201
    eventually(lambda: node(http, target)["spec"].get("unschedulable"), "the node cordoned")
    eventually(lambda: http.get(PODS).json()["items"], "a runner pod")
    assert FINALIZER in get_run(http, "doomed")["metadata"]["finalizers"]
    assert http.delete(f"{RUNS}/doomed").status_code == 200
    eventually(lambda: http.get(f"{RUNS}/doomed").status_code == 404, "the run gone")
    after = node(http, target)
    assert bool(after["spec"].get("unschedulable")) == bool(before["spec"].get("unschedulable"))
    assert stamps(after) == stamps(before)
    live = [
        p
        for p in http.get(PODS).json()["items"]
        if p["status"].get("phase") not in ("Succeeded", "Failed")
        and not p["metadata"].get("deletionTimestamp")
    ]
    assert live == []
    assert op.stop() == 0, op.output()
