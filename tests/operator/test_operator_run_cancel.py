"""A spec change reaches the engine at once: cancelling a running BurnInRun (a merge patch of
``spec.cancel``, as ``kubectl patch`` sends) settles it Cancelled, its load stopped and its
node released — the run's own event wakes its daemon, no timer is waited for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx

from tests.operator.conftest import (
    PODS,
    RUNS,
    Operator,
    apply_short_tests,
    eventually,
    node,
    run_body,
    settled,
    stamps,
    validate_run,
)
from tools.k8s_standin.cluster import StandInCluster

MERGE = {"Content-Type": "application/merge-patch+json"}


def test_cancelling_a_running_run_settles_it_cancelled_and_releases_its_node(
    cluster: StandInCluster,
    http: httpx.Client,
    operators: Callable[..., Operator],
    tmp_path: Path,
) -> None:
    apply_short_tests(http, tmp_path)
    target = cluster.nodes[0]
    before = node(http, target)
    op = operators().start()
    assert http.post(RUNS, json=run_body("stopped", [target])).status_code == 201
    eventually(lambda: http.get(PODS).json()["items"], "a runner pod")
    patch = {"spec": {"cancel": True, "cancelPolicy": "Immediate", "cancelReason": "test"}}
    assert http.patch(f"{RUNS}/stopped", json=patch, headers=MERGE).status_code == 200
    run = settled(http, "stopped")
    assert op.stop() == 0, op.output()
    assert run["status"]["phase"] == "Cancelled", run["status"]
    assert any("run cancelled: test" in (r.get("message") or "") for r in run["status"]["results"])
    validate_run(run)
    after = node(http, target)
    assert bool(after["spec"].get("unschedulable")) == bool(before["spec"].get("unschedulable"))
    assert stamps(after) == stamps(before)
