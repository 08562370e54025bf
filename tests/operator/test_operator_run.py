"""A BurnInRun of the built-in host profile on three stand-in nodes, driven by the operator as
a real process: the verdict with real runner output, each node cordoned with its stamp while
tested and restored afterwards — all observed over the API, as kubectl would."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.operator.conftest import (
    NODES,
    PODS,
    RUNS,
    Operator,
    apply_short_tests,
    journal,
    node,
    run_body,
    settled,
    stamps,
    validate_run,
)
from tools.k8s_standin.cluster import StandInCluster


class NodeWatcher:
    """Polls the nodes while the run goes, recording what each was seen as."""

    def __init__(self, http: httpx.Client, names: tuple[str, ...]) -> None:
        self.http, self.names = http, names
        self.seen: dict[str, list[tuple[bool, dict[str, str]]]] = {n: [] for n in names}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.is_set():
            for item in self.http.get(NODES).json()["items"]:
                name = item["metadata"]["name"]
                if name in self.seen:
                    cordoned = bool(item["spec"].get("unschedulable"))
                    self.seen[name].append((cordoned, stamps(item)))
            time.sleep(0.05)

    def __enter__(self) -> NodeWatcher:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def test_a_host_profile_run_on_three_nodes_reaches_its_verdict_with_real_runner_output(
    cluster: StandInCluster,
    http: httpx.Client,
    operators: Callable[..., Operator],
    tmp_path: Path,
) -> None:
    apply_short_tests(http, tmp_path)
    before = {n: node(http, n) for n in cluster.nodes}
    op = operators().start()
    with NodeWatcher(http, cluster.nodes) as watcher:
        created = http.post(RUNS, json=run_body("host-3", cluster.nodes))
        assert created.status_code == 201, created.text
        run = settled(http, "host-3")
    assert op.stop() == 0, op.output()
    status: dict[str, Any] = run["status"]
    results = status["results"]
    assert sorted((r["name"], r["nodes"][0]) for r in results) == sorted(
        (t, n)
        for t in ("host-kernel-and-links", "host-memory", "host-disk", "host-fingerprint")
        for n in cluster.nodes
    )
    # The verdict is the hardware's (a disk on a busy machine may miss its floor): never an
    # Error of the machinery, and the run's phase is the fold of its results.
    assert all(r["phase"] in ("Passed", "Failed") for r in results), results
    failed = any(r["phase"] == "Failed" for r in results)
    assert status["phase"] == ("Failed" if failed else "Passed")
    assert status["passed"] + status["failed"] == len(results)
    # Real runner output: every result's metrics and marker came from its runner process.
    for r in results:
        assert r["metrics"], r
        assert r["attempts"][0]["exitCode"] == 0, r
    assert all("STRESSAPPTEST_PASS" in r["message"] for r in results if r["name"] == "host-memory")
    assert all(r["metrics"]["ioErrors"] == "0" for r in results if r["name"] == "host-disk")
    validate_run(run)
    for name in cluster.nodes:
        cordoned_with_stamp = [s for c, s in watcher.seen[name] if c and s]
        assert cordoned_with_stamp, f"{name} was never seen cordoned with its stamp"
        after = node(http, name)
        assert bool(after["spec"].get("unschedulable")) == bool(
            before[name]["spec"].get("unschedulable")
        )
        assert stamps(after) == stamps(before[name])
    assert status.get("cordonedNodes") in (None, [])
    # Every pod the run made ran on its node and finished.
    pods = http.get(PODS).json()["items"]
    assert len(pods) == len(results)
    assert {p["status"]["phase"] for p in pods} == {"Succeeded"}
    # Every pod the operator created was valid (the stand-in checks a Pod against its schema on
    # create), and every status it stored was accepted by the CRD's schema (checked on write).
    entries = journal(cluster)
    posts = [e for e in entries if e["method"] == "POST" and e["path"] == PODS]
    assert len(posts) == len(results) and {e["status"] for e in posts} == {201}
    ours = [e for e in entries if e.get("user_agent", "").startswith("glimmer-operator/")]
    assert not [e for e in ours if e.get("status") in (400, 422)]
    # kopf wrote nothing of its own: no finalizer, no progress, no last-handled configuration.
    assert run["metadata"].get("finalizers") in (None, [])
    assert not [k for k in run["metadata"].get("annotations") or {} if "kopf" in k]
    assert "kopf" not in status
