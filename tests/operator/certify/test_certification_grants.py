"""The ClusterRole (glimmer.operator.rbac) covers what the certification controllers send: a
Certification of two categories (one failing), a WorkloadRun, and the deletion of both, driven
through the Certification, Workflow, WorkloadRun and Job controllers against the API stand-in;
every (verb, API group, resource) in the stand-in's request journal from the controllers'
client must be granted. (The burn-in drive of tests/operator/test_rbac_journal.py serves no
certification kind, so it holds these grants as unobserved; this is where they are seen.)"""

from __future__ import annotations

from typing import Any

from glimmer.operator.certify.job_reconcile import JobReconciler
from glimmer.operator.rbac import used_pairs
from tests.operator.certify.conftest import (
    NS,
    Controllers,
    add_nodes,
    certification,
    h100_nodes,
    run_certification,
    run_workflow,
)
from tools.k8s_standin.journal import read


def _requests(ctl: Controllers) -> set[tuple[str, str, str]]:
    used = set()
    for entry in read(ctl.api.root / "journal.jsonl"):
        # lightkube's client is the controllers'; the test's own calls go through plain httpx.
        if str(entry.get("user_agent", "")).startswith("python-httpx2") and entry.get("verb"):
            used.add((entry["verb"], entry["group"], entry["resource"]))
    return used


def test_every_request_of_the_certification_controllers_is_granted(
    controllers: Controllers,
) -> None:
    api = controllers.api
    add_nodes(api, h100_nodes(2))
    jobs = JobReconciler(api.client, controllers.clock.now)

    def outcome(job: dict[str, Any]) -> dict[str, Any]:
        jobs.reconcile(NS, job["metadata"]["name"])  # the Job controller's first steps
        node = job["metadata"]["annotations"]["certify.glimmer.ai/group-nodes"]
        return (
            {"exit_code": 1, "text": "FAIL: 1 subtest(s) failed: PCIe"} if node == "gpu-01" else {}
        )

    cats = [
        {"domain": "diagnostics", "variant": "dcgm-level1"},
        {"domain": "communication", "variant": "nccl-all-reduce",
         "options": {"testScale": "intra-node"}},
    ]  # fmt: skip
    api.create("certifications", certification("rbac", cats))
    run_certification(controllers, "rbac", outcome)
    run = {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "WorkloadRun",
        "metadata": {"name": "probe"},
        "spec": {"image": "img:1", "numNodes": 1, "framework": {"exec": {"command": ["true"]}}},
    }
    api.create("workloadruns", run)
    controllers.workloadrun.reconcile(NS, "probe")
    run_workflow(controllers, "probe", outcome)
    controllers.workloadrun.reconcile(NS, "probe")
    for plural, name in (("certifications", "rbac"), ("workflows", "probe")):
        assert api.http.delete(api.path(plural, name)).status_code == 200
    controllers.certification.reconcile(NS, "rbac")
    for _ in range(10):  # the Workflows' deletion waits for their Jobs' (the Job controller's)
        for job in api.items("jobs"):
            jobs.reconcile(NS, job["metadata"]["name"])
        for wf in api.items("workflows"):
            controllers.workflow.reconcile(NS, wf["metadata"]["name"])
        if not api.items("workflows"):
            break
    assert api.items("workflows") == [] and api.items("jobs") == []
    used = _requests(controllers)
    assert ("create", "certify.glimmer.ai", "jobs") in used  # the drive reached the Jobs
    assert ("delete", "trainer.kubeflow.org", "trainingruntimes") in used
    missing = sorted(used - used_pairs())
    assert missing == [], f"used but not granted (add to glimmer.operator.rbac): {missing}"
