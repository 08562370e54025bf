"""The Job-CR ledger: one LIST per replay, create-if-absent, adoption, collisions."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.backends.kubernetes.certify.ledger import (
    GROUP_NODES_ANNOTATION,
    JobLedger,
    JobNameCollision,
    NotReady,
)
from glimmer.certify.jobs import DcgmJob, Job, JobLog, NcclJob
from tests.backends.kubernetes.certify.conftest import NS, Api

JOBS = f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/jobs"
WORKFLOWS = f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/workflows"


def spec_for(key: str, job: Job, nodes: tuple[str, ...]) -> dict[str, Any]:
    return {"workload": {"trainJob": {"trainer": {"numNodes": len(nodes)}}}}


def workflow(api: Api, name: str = "cert-comm-nccl") -> dict[str, Any]:
    body = {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Workflow",
        "metadata": {"name": name},
        "spec": {
            "jobTemplate": {
                "metadata": {"labels": {"team": "infra"}},
                "spec": {"workload": {"trainJob": {}}},
            },
            "orchestration": {},
        },
    }
    made = api.http.post(WORKFLOWS, json=body)
    assert made.status_code == 201, made.text
    out: dict[str, Any] = made.json()
    return out


def test_submit_creates_the_job_owned_by_the_workflow(api: Api) -> None:
    wf = workflow(api)
    ledger = JobLedger(api.client, wf, spec_for)
    job = NcclJob("screen-0", "all_reduce", ("gpu-01", "gpu-02"))
    ledger.submit("cert-comm-nccl-screen-0-iter-1", job, job.nodes)
    got = api.http.get(f"{JOBS}/cert-comm-nccl-screen-0-iter-1").json()
    meta = got["metadata"]
    assert meta["labels"] == {
        "team": "infra",
        "app.kubernetes.io/managed-by": "glimmer",
        "certify.glimmer.ai/workflow": "cert-comm-nccl",
        "certify.glimmer.ai/group": "screen-0",
    }
    assert meta["annotations"][GROUP_NODES_ANNOTATION] == "gpu-01,gpu-02"
    assert meta["ownerReferences"][0]["uid"] == wf["metadata"]["uid"]
    assert got["spec"]["workload"]["trainJob"]["trainer"]["numNodes"] == 2
    assert ledger.created == ["cert-comm-nccl-screen-0-iter-1"]


def test_outcome_is_none_until_the_job_has_one_then_its_log(api: Api) -> None:
    wf = workflow(api)
    job = DcgmJob("gpu-01", 2)
    JobLedger(api.client, wf, spec_for).submit("k-1", job, ("gpu-01",))
    assert JobLedger(api.client, wf, spec_for).outcome("k-1") is None
    body = api.http.get(f"{JOBS}/k-1").json()
    body["status"] = {"outcome": {"text": "Pass\n", "exitCode": 0, "elapsedSeconds": 3.0}}
    put = api.http.put(f"{JOBS}/k-1/status", json=body)
    assert put.status_code == 200, put.text
    assert JobLedger(api.client, wf, spec_for).outcome("k-1") == JobLog("Pass\n", 0, elapsed_s=3.0)
    assert JobLedger(api.client, wf, spec_for).outcome("never-asked") is None


def test_a_replay_lists_once_and_submits_nothing_twice(api: Api) -> None:
    wf = workflow(api)
    first = JobLedger(api.client, wf, spec_for)
    job = DcgmJob("gpu-01", 2)
    first.submit("k-1", job, ("gpu-01",))
    first.submit("k-1", job, ("gpu-01",))
    assert first.created == ["k-1"]
    # The next replay finds it in its one LIST and creates nothing.
    again = JobLedger(api.client, wf, spec_for)
    assert again.outcome("k-1") is None
    again.submit("k-1", job, ("gpu-01",))
    assert again.created == []
    assert len(api.http.get(JOBS).json()["items"]) == 1


def test_a_job_created_by_a_crashed_replay_is_adopted(api: Api) -> None:
    wf = workflow(api)
    stale = JobLedger(api.client, wf, spec_for)
    stale.jobs()  # listed before the Job existed
    JobLedger(api.client, wf, spec_for).submit("k-1", DcgmJob("gpu-01", 2), ("gpu-01",))
    stale.submit("k-1", DcgmJob("gpu-01", 2), ("gpu-01",))
    assert stale.created == []
    assert "k-1" in stale.jobs()


def test_a_foreign_job_of_the_same_name_is_a_collision(api: Api) -> None:
    wf = workflow(api)
    other = workflow(api, "other")
    JobLedger(api.client, other, spec_for).submit("k-1", DcgmJob("gpu-01", 2), ("gpu-01",))
    with pytest.raises(JobNameCollision, match=r"job default/k-1 exists and is not controlled"):
        JobLedger(api.client, wf, spec_for).submit("k-1", DcgmJob("gpu-01", 2), ("gpu-01",))


def test_one_replay_asks_the_api_for_the_jobs_once(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    wf = workflow(api)
    for i in range(3):
        JobLedger(api.client, wf, spec_for).submit(f"k-{i}", DcgmJob(f"gpu-{i}", 2), (f"gpu-{i}",))
    lists = []
    real = api.client.list

    def counted(*args: Any, **kwargs: Any) -> Any:
        lists.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(api.client, "list", counted)
    replay = JobLedger(api.client, wf, spec_for)
    assert [replay.outcome(f"k-{i}") for i in range(3)] == [None, None, None]
    replay.submit("k-0", DcgmJob("gpu-0", 2), ("gpu-0",))
    assert len(lists) == 1


def test_a_job_whose_dependency_is_not_ready_is_not_created_until_it_is(api: Api) -> None:
    wf = workflow(api)
    job = NcclJob("group-0", "all_reduce", ("gpu-01", "gpu-02"))
    key = "cert-comm-nccl-group-0-iter-1"
    ready = False

    def waiting_spec_for(key: str, job: Job, nodes: tuple[str, ...]) -> dict[str, Any]:
        if not ready:
            raise NotReady("ComputeDomain default/cd is not ready")
        return spec_for(key, job, nodes)

    first = JobLedger(api.client, wf, waiting_spec_for)
    first.submit(key, job, job.nodes)
    assert first.created == [] and first.not_ready == {key: "ComputeDomain default/cd is not ready"}
    assert api.http.get(f"{JOBS}/{key}").status_code == 404
    ready = True  # the next reconcile's replay asks again
    second = JobLedger(api.client, wf, waiting_spec_for)
    second.submit(key, job, job.nodes)
    assert second.created == [key] and second.not_ready == {}
    assert api.http.get(f"{JOBS}/{key}").status_code == 200
