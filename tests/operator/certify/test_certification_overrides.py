"""Scenario 35 (specs/certify.md §9.2): a Certification's image, mlnxPerNode and resources
options reach what runs — the Job's TrainJob (made by the Job controller) and the runtime copy
it names — through the Workflow the Certification builds."""

from __future__ import annotations

import json
from typing import Any

from glimmer.operator.certify.job_reconcile import JobReconciler
from tests.operator.certify.conftest import (
    NS,
    Controllers,
    add_nodes,
    certification,
    eventually,
    gpu_node,
    h100_nodes,
)

TRAINER = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/default"
IMAGE = "registry.example/nccl-tests:custom"


def _workloads(ctl: Controllers, category: dict[str, Any], **target: Any) -> list[dict[str, Any]]:
    """The TrainJobs (and the runtimes they name) of the first category's Jobs."""
    api = ctl.api
    api.create("certifications", certification("ovr", [category], target or None))
    ctl.certification.reconcile(NS, "ovr")
    [wf] = api.items("workflows")
    name = wf["metadata"]["name"]
    for _ in range(2):
        ctl.workflow.reconcile(NS, name)
    jobs = api.items("jobs", f"certify.glimmer.ai/workflow={name}")
    assert jobs
    reconciler = JobReconciler(api.client, ctl.clock.now)
    out = []
    for job in jobs:
        workload = f"{job['metadata']['name']}-workload"

        def made(job: dict[str, Any] = job, workload: str = workload) -> dict[str, Any] | None:
            reconciler.reconcile(NS, job["metadata"]["name"])
            got = api.http.get(f"{TRAINER}/trainjobs/{workload}")
            return got.json() if got.status_code == 200 else None

        train_job = eventually(made, f"TrainJob {workload}", 10)
        runtime = train_job["spec"]["runtimeRef"]["name"]
        got = api.http.get(f"{TRAINER}/trainingruntimes/{runtime}")
        assert got.status_code == 200, got.text
        out += [train_job, got.json()]
    return out


def test_certification_image_override_nccl_reaches_the_trainjob_and_its_runtime(
    controllers: Controllers,
) -> None:
    add_nodes(controllers.api, h100_nodes(2))
    nccl = {
        "domain": "communication",
        "variant": "nccl-all-reduce",
        "options": {"image": IMAGE, "testScale": "intra-node"},
    }
    objects = _workloads(controllers, nccl)
    assert {o["kind"] for o in objects} == {"TrainJob", "TrainingRuntime"}
    for obj in objects:
        assert IMAGE in json.dumps(obj), obj["kind"]


def test_certification_mlnx_override_nccl_requests_that_many_nics(
    controllers: Controllers,
) -> None:
    azure = [gpu_node(f"az-{i}", provider_id=f"azure:///vm/az-{i}") for i in range(2)]
    add_nodes(controllers.api, azure)
    nccl = {
        "domain": "communication",
        "variant": "nccl-all-reduce",
        "options": {"mlnxPerNode": 4, "testScale": "intra-node"},
    }
    objects = _workloads(controllers, nccl)
    text = json.dumps(objects)
    assert '"nvidia.com/mlnxnics": "4"' in text
    assert '"nvidia.com/mlnxnics": "8"' not in text  # the H100 default, overridden


def test_certification_resources_override_sets_the_training_container(
    controllers: Controllers,
) -> None:
    add_nodes(controllers.api, h100_nodes(2))
    training = {
        "domain": "training",
        "variant": "nemotron5-8b",
        "options": {"resources": {"limits": {"cpu": "96", "memory": "600Gi"}}},
    }
    objects = _workloads(controllers, training)
    runtimes = [o for o in objects if o["kind"] == "TrainingRuntime"]
    text = json.dumps(runtimes)
    assert '"cpu": "96"' in text and '"memory": "600Gi"' in text
    assert '"memory": "500Gi"' in text  # the requests the option left alone keep the default
