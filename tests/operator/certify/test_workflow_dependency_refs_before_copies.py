"""§3.4 refs: a Job's own dependency copy is recorded in ``status.dependencyRefs`` before it
is created, so an operator that dies after creating the copy and its Job, before the pass's
status write, leaves no copy the deletion cannot find (the SIGKILL test saw one leak in ~10)."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.backends.kubernetes.certify.resources import JOBS
from glimmer.operator.certify.workflow import WorkflowController
from glimmer.operator.certify.workflow_cluster import Cluster, Kind
from tests.operator.certify.conftest import NS, Controllers, add_nodes, h100_nodes, run_workflow
from tests.operator.certify.test_workflow_replay import WF, _started

RUNTIMES = f"/apis/trainer.kubeflow.org/v1alpha1/namespaces/{NS}/trainingruntimes"


class Died(Exception):
    """The operator process ended here."""


class DiesOnceJobsExist(Cluster):
    """A Cluster that dies before the first status write made once a Job of the Workflow
    exists: the kill between creating a Job and recording what its pass created."""

    def write_status(self, kind: Kind, body: Any) -> dict[str, Any]:
        if self.items(JOBS, NS, {"certify.glimmer.ai/workflow": WF}):
            raise Died("before the status write")
        return super().write_status(kind, body)


def _runtimes(controllers: Controllers) -> set[str]:
    found = controllers.api.http.get(RUNTIMES).json()["items"]
    return {o["metadata"]["name"] for o in found}


def test_a_job_copy_is_recorded_before_it_is_created(controllers: Controllers) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    _started(controllers)
    dying = WorkflowController(DiesOnceJobsExist(api.client), controllers.clock.now, poll=0.0)
    with pytest.raises(Died):
        for _ in range(5):
            dying.reconcile(NS, WF)
    made = _runtimes(controllers)
    assert made, "the pass created a job's runtime copy before it died"
    wf = api.get("workflows", WF)
    assert wf is not None
    recorded = {r["name"] for r in (wf.get("status") or {}).get("dependencyRefs") or ()}
    assert made <= recorded, sorted(made - recorded)


def test_no_job_copy_outlives_a_workflow_whose_operator_died_mid_pass(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    _started(controllers)
    dying = WorkflowController(DiesOnceJobsExist(api.client), controllers.clock.now, poll=0.0)
    with pytest.raises(Died):
        for _ in range(5):
            dying.reconcile(NS, WF)
    run_workflow(controllers, WF)
    assert _runtimes(controllers)
    assert api.http.delete(f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/workflows/{WF}")
    for _ in range(50):
        controllers.workflow.reconcile(NS, WF)
        for job in api.items("jobs", f"certify.glimmer.ai/workflow={WF}"):
            if job["metadata"].get("finalizers"):
                api.http.patch(
                    f"/apis/certify.glimmer.ai/v1alpha1/namespaces/{NS}/jobs/{job['metadata']['name']}",
                    json={"metadata": {"finalizers": None}},
                    headers={"Content-Type": "application/merge-patch+json"},
                )
        if api.get("workflows", WF) is None:
            break
    assert api.get("workflows", WF) is None
    assert _runtimes(controllers) == set()
