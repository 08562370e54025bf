"""The TrainJob a Job makes carries the core's job name (the Job's ``certify.glimmer.ai/group``
label), and the Trainer stand-in runs its simulated job under that name, as the simulator's own
substrate does: the same noise, the same figures on both backends."""

from __future__ import annotations

from typing import Any

from glimmer.operator.certify.job_workload import train_job_manifest
from tools.k8s_standin.trainer_jobs import job_name

GROUP = "certify.glimmer.ai/group"


def _job(labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "certify.glimmer.ai/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "wf-screen-0-iter-1", "namespace": "ns", "uid": "u", "labels": labels},
        "spec": {"workload": {"trainJob": {"trainer": {"numNodes": 2}}}},
    }


def test_the_trainjob_carries_the_jobs_group_label() -> None:
    made = train_job_manifest(_job({GROUP: "screen-0"}))
    assert made["metadata"]["labels"][GROUP] == "screen-0"


def test_a_job_without_a_group_makes_a_trainjob_without_one() -> None:
    assert GROUP not in train_job_manifest(_job({}))["metadata"]["labels"]


def test_the_stand_in_names_a_job_by_its_group_else_by_the_trainjob() -> None:
    grouped = {"metadata": {"name": "wf-screen-0-iter-1-workload", "labels": {GROUP: "screen-0"}}}
    assert job_name(grouped) == "screen-0"
    assert job_name({"metadata": {"name": "mine-workload"}}) == "mine-workload"
