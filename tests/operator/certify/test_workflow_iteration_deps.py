"""§3.2 handleIterationComplete "clean iteration-scoped deps", §3.4 refs "with scope, group and
iteration", on the API stand-in with repeatCount 2: each Job's own copy (its TrainingRuntime)
is recorded with its Job and iteration; iteration 2 creates no Job while a pod of iteration 1
still runs; once it has drained, iteration 1's copies are deleted in reverse creation order
before iteration 2's Jobs are made; the last iteration's copies stay with the Workflow."""

from __future__ import annotations

from typing import Any

from glimmer.certify.platform.vocab import JOB_LABEL
from tests.operator.certify.conftest import (
    NS,
    Controllers,
    finish_open_jobs,
    is_true,
    passing,
    run_workflow,
)
from tests.operator.certify.workflow_harness import level1_workflow
from tools.k8s_standin.journal import read

WF = "w-diagnostics-dcgm-level1"
RUNTIMES = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}/trainingruntimes"
PODS = f"/api/v1/namespaces/{NS}/pods"


def _runtimes(ctl: Controllers) -> set[str]:
    got = ctl.api.http.get(RUNTIMES)
    assert got.status_code == 200, got.text
    return {o["metadata"]["name"] for o in got.json()["items"]}


def _jobs(ctl: Controllers) -> list[str]:
    return [
        j["metadata"]["name"] for j in ctl.api.items("jobs", f"certify.glimmer.ai/workflow={WF}")
    ]


def _job_refs(ctl: Controllers) -> list[dict[str, Any]]:
    wf = ctl.api.get("workflows", WF)
    assert wf is not None
    return [r for r in wf["status"].get("dependencyRefs") or () if r["scope"] == "job"]


def _running_pod(ctl: Controllers, job: str) -> str:
    """A pod of ``job``'s workload, still running (as the kubelet would report it)."""
    name = f"{job}-node-0"
    body = {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": {JOB_LABEL: job}},
            "spec": {"containers": [{"name": "node", "image": "dcgm"}]}}  # fmt: skip
    made = ctl.api.http.post(PODS, json=body)
    assert made.status_code == 201, made.text
    _set_phase(ctl, name, "Running")
    return name


def _set_phase(ctl: Controllers, pod: str, phase: str) -> None:
    got = ctl.api.http.get(f"{PODS}/{pod}")
    assert got.status_code == 200, got.text
    body = got.json()
    put = ctl.api.http.put(f"{PODS}/{pod}/status", json={**body, "status": {"phase": phase}})
    assert put.status_code == 200, put.text


def test_an_iterations_copies_go_in_reverse_once_its_pods_drain_before_the_next_starts(
    controllers: Controllers,
) -> None:
    api = controllers.api
    level1_workflow(controllers, 3, cert="w", repeatCount=2)
    for _ in range(10):
        controllers.workflow.reconcile(NS, WF)
        if len(_jobs(controllers)) == 3:
            break
    first = _jobs(controllers)
    assert len(first) == 3, first
    refs = _job_refs(controllers)
    # Each copy is recorded with the Job it serves and its iteration.
    assert sorted(r["groupName"] for r in refs) == sorted(first)
    assert {r["iteration"] for r in refs} == {1}
    first_copies = [r["name"] for r in refs]
    assert set(first_copies) <= _runtimes(controllers)

    pod = _running_pod(controllers, refs[0]["groupName"])
    finish_open_jobs(api, WF, passing)
    for _ in range(3):
        controllers.workflow.reconcile(NS, WF)
    wf = api.get("workflows", WF)
    assert wf is not None and wf["status"]["orchestration"]["currentIteration"] == 2
    # Iteration 2 has begun but waits: a pod of iteration 1 still runs on its copies.
    assert sorted(_jobs(controllers)) == sorted(first)
    assert set(first_copies) <= _runtimes(controllers)

    _set_phase(controllers, pod, "Succeeded")
    since = len(read(api.root / "journal.jsonl"))
    controllers.workflow.reconcile(NS, WF)
    assert not set(first_copies) & _runtimes(controllers)
    assert len(_jobs(controllers)) == 6
    entries = read(api.root / "journal.jsonl")[since:]
    deletes = [
        e["path"].rsplit("/", 1)[-1]
        for e in entries
        if e["method"] == "DELETE" and "/trainingruntimes/" in e["path"]
    ]
    assert deletes == list(reversed(first_copies))
    # Deleted before iteration 2's first Job was created.
    first_post = next(
        i for i, e in enumerate(entries) if e["method"] == "POST" and e["path"].endswith("/jobs")
    )
    last_delete = max(
        i
        for i, e in enumerate(entries)
        if e["method"] == "DELETE" and "/trainingruntimes/" in e["path"]
    )
    assert last_delete < first_post

    done = run_workflow(controllers, WF)
    assert is_true(done, "Succeeded"), done["status"]
    second = [r for r in _job_refs(controllers) if r["iteration"] == 2]
    assert sorted(r["groupName"] for r in second) == sorted(set(_jobs(controllers)) - set(first))
    # The last iteration's copies stay until the Workflow goes (the report reads them).
    assert _runtimes(controllers) == {r["name"] for r in second}
