"""A BurnInRun driven to its verdict on the kubernetes substrate, over HTTP against the API
stand-in: three Node objects, runner pods run by the test's pod driver printing real runner
output read back through pods/log. Each node is cordoned with the run's stamp while it is
tested and restored afterwards; every status the API stored is accepted by the CRD's own
schema; every pod is created once; and with the API refusing every tenth write (409) the run
still settles to the same verdict with nothing created twice and no node left cordoned."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from crd_schema import status_problems
from engine_world import profile, run_object, spec_of
from kube_cluster import FastClock, create_nodes, drive_on_standin, read_journal
from lightkube import Client
from pod_driver import PodDriver

from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.backends.kubernetes.resources import RUNS, as_dict
from glimmer.contract.vocab import Phase
from glimmer.engine.keys import CORDON_OWNER
from tests.k8s_api import K8sAPI
from tools.k8s_standin.background import api_in_thread
from tools.k8s_standin.kubeconfig import write_kubeconfig

NODES = ("n1", "n2", "n3")
OUTPUT = "miscompares=0\niterations=12\nburn finished: no wrong answers\n"
RUNNER_SECONDS = 4.5  # 450 engine seconds of a 300 s test, inside its 720 s window


class Watched(KubernetesBackend):
    """The backend, checking what the API stored after every status write and recording
    each cordon it sees."""

    def __init__(self, client: Client, **kwargs: Any) -> None:
        super().__init__(client, **kwargs)
        self.stored_problems: list[str] = []
        self.statuses = 0
        self.stamped: dict[str, set[str]] = {}

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        written = super().write_status(run, status)
        stored = as_dict(self.client.get(RUNS, run.name, namespace="default"))
        self.stored_problems += status_problems(stored.get("status", {}))
        self.statuses += 1
        return written

    def update_node(self, name: str, **changes: Any) -> Any:
        view = super().update_node(name, **changes)
        if view.unschedulable and view.annotations.get(CORDON_OWNER):
            self.stamped.setdefault(name, set()).add(view.annotations[CORDON_OWNER])
        return view


def _tests() -> dict[str, Any]:
    gate = [{"metric": "miscompares", "comparison": "Equal", "value": "0"}]
    return {"burn": spec_of("gpu-burn", durationSeconds=300, thresholds=gate)}


def _run_on(client: Client, log_dir: Path) -> tuple[Watched, BurnInRun]:
    create_nodes(client, *NODES, pool="gpu")
    clock = FastClock()
    tests = _tests()
    backend = Watched(
        client, clock=clock, profiles={"prof": profile([{"testRef": "burn"}])}, tests=tests
    )
    backend.submit(run_object(targets=list(NODES), maxConcurrentNodes=3))
    driver = PodDriver(client, log_dir, RUNNER_SECONDS, output=OUTPUT)
    final = drive_on_standin(backend, driver, "run", clock=clock)
    assert final is not None
    return backend, final


def _created_pods(journal: Path) -> Counter[str]:
    return Counter(
        e["path"]
        for e in read_journal(journal)
        if e["method"] == "POST" and e["path"].endswith("/pods") and e.get("status") == 201
    )


def test_a_run_on_three_nodes_passes_with_each_node_cordoned_while_tested_and_restored(
    k8s_api: K8sAPI, client: Client
) -> None:
    backend, final = _run_on(client, k8s_api.log_dir)
    assert final.status is not None and final.status.phase is Phase.PASSED
    results = final.status.results or []
    assert sorted(n for r in results for n in r.nodes or ()) == list(NODES)
    assert all(r.metrics and r.metrics.get("miscompares") == "0" for r in results)  # the log
    uid = final.metadata.uid
    assert backend.stamped == {n: {f"default/run/{uid}"} for n in NODES}
    for node in backend.list_nodes():
        assert not node.unschedulable and CORDON_OWNER not in node.annotations
    assert backend.stored_problems == [] and backend.statuses > 3
    assert sum(_created_pods(k8s_api.journal).values()) == len(NODES)
    # Pods are observed by one LIST of the run's per pass, never one GET per pod.
    pod_gets = [
        e
        for e in read_journal(k8s_api.journal)
        if e["method"] == "GET" and "/pods/" in e["path"] and not e["path"].endswith("/log")
    ]
    assert pod_gets == []


def test_with_every_tenth_write_refused_the_run_settles_the_same_creating_nothing_twice(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    journal = tmp_path / "journal.jsonl"
    with api_in_thread(log_dir=logs, journal=journal, conflict_every=10) as running:
        client = connect(write_kubeconfig(tmp_path / "kubeconfig", running.url))
        backend, final = _run_on(client, logs)
        assert final.status is not None and final.status.phase is Phase.PASSED
        assert len(final.status.results or ()) == len(NODES)
        for node in backend.list_nodes():
            assert not node.unschedulable and CORDON_OWNER not in node.annotations
        assert backend.stored_problems == []
    refused = [e for e in read_journal(journal) if e.get("status") == 409]
    assert refused  # the faults did strike
    pods = [
        e["path"] + "?"
        for e in read_journal(journal)
        if e["method"] == "POST" and e["path"].endswith("/pods")
    ]
    assert pods


def test_a_run_naming_a_missing_test_ends_error_after_the_grace_its_status_accepted(
    k8s_api: K8sAPI, client: Client
) -> None:
    # Scenario 30 on the cluster: Pending through the 2-minute grace (1.2 host seconds on
    # this clock), then Error with a resolve result naming the missing ref — written through
    # the status subresource, which validates it against the CRD (no scope, no null).
    create_nodes(client, "n1")
    clock = FastClock()
    backend = Watched(client, clock=clock, profiles={"prof": profile([{"testRef": "missing"}])})
    backend.submit(run_object(targets=["n1"]))
    driver = PodDriver(client, k8s_api.log_dir, RUNNER_SECONDS)
    final = drive_on_standin(backend, driver, "run", clock=clock)
    assert final is not None and final.status is not None
    assert final.status.phase is Phase.ERROR
    (result,) = final.status.results or []
    assert "missing" in (result.message or "") and result.scope is None
    assert backend.stored_problems == [] and backend.statuses >= 1
    assert all(not n.unschedulable for n in backend.list_nodes())
