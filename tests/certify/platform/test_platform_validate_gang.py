"""ValidateResolvedGangScheduling and ValidateResolvedJobTemplate."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from trainer_shapes import job_template, jobs, pod, torch_runtime

from glimmer.certify.platform import (
    PlatformError,
    apply_gang_scheduler_to_dependencies,
    validate_resolved_gang_scheduling,
    validate_resolved_job_template,
)

Obj = dict[str, Any]
GS = {"schedulerName": "kai-scheduler", "queue": "team-a"}


def _deps(gs: Obj = GS) -> list[Any]:
    return apply_gang_scheduler_to_dependencies([torch_runtime()], gs)


def _js(labels: dict[str, str] | None = None) -> Obj:
    js: Obj = job_template("train-runtime")["spec"]
    if labels is not None:
        js["workloadMetadata"] = {"labels": labels}
    return js


def test_workload_queue_label_removed_by_an_override_is_restored() -> None:
    out = validate_resolved_gang_scheduling(_js(), _deps(), GS)
    assert out["workloadMetadata"]["labels"] == {"kai.scheduler/queue": "team-a"}


def test_workload_queue_label_equal_to_the_intent_passes() -> None:
    out = validate_resolved_gang_scheduling(_js({"kai.scheduler/queue": "team-a"}), _deps(), GS)
    assert out["workloadMetadata"]["labels"] == {"kai.scheduler/queue": "team-a"}


def test_workload_queue_label_changed_by_an_override_fails_with_the_conflict_message() -> None:
    with pytest.raises(PlatformError) as e:
        validate_resolved_gang_scheduling(_js({"kai.scheduler/queue": "b"}), _deps(), GS)
    assert e.value.message == (
        'spec.jobTemplate.spec.workloadMetadata.labels["kai.scheduler/queue"]: '
        'conflicting label value "b", expected "team-a"'
    )


def test_restoring_the_label_works_on_a_copy_not_the_stored_spec() -> None:
    js = _js()
    validate_resolved_gang_scheduling(js, _deps(), GS)
    assert "workloadMetadata" not in js


def test_runtime_queue_label_missing_fails_and_is_never_repaired() -> None:
    deps = _deps()
    del jobs(deps[0])[0]["template"]["spec"]["template"]["metadata"]["labels"][
        "kai.scheduler/queue"
    ]
    before = copy.deepcopy(deps)
    with pytest.raises(
        PlatformError,
        match=r'template.spec.template.metadata.labels\["kai.scheduler/queue"\] is missing',
    ):
        validate_resolved_gang_scheduling(_js(), deps, GS)
    assert deps == before


def test_runtime_queue_label_redirected_fails() -> None:
    deps = _deps()
    jobs(deps[0])[0]["template"]["metadata"]["labels"]["kai.scheduler/queue"] = "other"
    with pytest.raises(
        PlatformError,
        match=r'template.metadata.labels\["kai.scheduler/queue"\] is "other", expected "team-a"',
    ):
        validate_resolved_gang_scheduling(_js(), deps, GS)


@pytest.mark.parametrize("scheduler", [None, "default-scheduler"])
def test_runtime_scheduler_name_missing_or_changed_fails(scheduler: str | None) -> None:
    deps = _deps()
    spec = pod(jobs(deps[0])[0])
    if scheduler is None:
        del spec["schedulerName"]
    else:
        spec["schedulerName"] = scheduler
    with pytest.raises(PlatformError, match="schedulerName"):
        validate_resolved_gang_scheduling(_js(), deps, GS)


def test_a_runtime_patch_supplying_a_missing_label_passes() -> None:
    deps = _deps()
    del jobs(deps[0])[0]["template"]["metadata"]["labels"]["kai.scheduler/queue"]
    js = _js()
    js["workload"]["trainJob"]["runtimePatches"] = [
        {
            "manager": "me",
            "trainingRuntimeSpec": {
                "template": {
                    "spec": {
                        "replicatedJobs": [
                            {
                                "name": "node",
                                "template": {
                                    "metadata": {"labels": {"kai.scheduler/queue": "team-a"}}
                                },
                            }
                        ]
                    }
                }
            },
        }
    ]
    validate_resolved_gang_scheduling(js, deps, GS)


def test_a_runtime_patch_redirecting_a_label_fails() -> None:
    js = _js()
    js["workload"]["trainJob"]["runtimePatches"] = [
        {
            "manager": "me",
            "trainingRuntimeSpec": {
                "template": {
                    "spec": {
                        "replicatedJobs": [
                            {
                                "name": "node",
                                "template": {"metadata": {"labels": {"kai.scheduler/queue": "x"}}},
                            }
                        ]
                    }
                }
            },
        }
    ]
    with pytest.raises(PlatformError, match='is "x"'):
        validate_resolved_gang_scheduling(js, _deps(), GS)


def test_runtime_ref_kind_omitted_defaults_to_cluster_training_runtime_and_fails() -> None:
    js = _js()
    del js["workload"]["trainJob"]["runtimeRef"]["kind"]
    with pytest.raises(PlatformError, match="ClusterTrainingRuntime"):
        validate_resolved_gang_scheduling(js, _deps(), GS)


@pytest.mark.parametrize("field", ["kind", "apiGroup"])
def test_runtime_ref_explicit_empty_kind_or_group_fails(field: str) -> None:
    js = _js()
    js["workload"]["trainJob"]["runtimeRef"][field] = ""
    with pytest.raises(PlatformError):
        validate_resolved_gang_scheduling(js, _deps(), GS)


def test_runtime_ref_redirected_outside_the_dependencies_fails() -> None:
    js = _js()
    js["workload"]["trainJob"]["runtimeRef"]["name"] = "elsewhere"
    with pytest.raises(PlatformError, match="not among the Workflow's TrainingRuntime"):
        validate_resolved_gang_scheduling(js, _deps(), GS)


def test_gang_intent_without_a_train_job_fails() -> None:
    with pytest.raises(PlatformError, match="has no trainJob"):
        validate_resolved_gang_scheduling({"workload": {}}, _deps(), GS)


def test_nil_gang_scheduler_is_a_no_op() -> None:
    js = _js({"kai.scheduler/queue": "anything"})
    assert validate_resolved_gang_scheduling(js, [], None) == js


def test_gs_is_re_resolved_so_a_scheduler_name_alone_checks_the_default_queue() -> None:
    deps = _deps({"schedulerName": "kai-scheduler"})
    out = validate_resolved_gang_scheduling(_js(), deps, {"schedulerName": "kai-scheduler"})
    assert out["workloadMetadata"]["labels"] == {"kai.scheduler/queue": "default-queue"}


def test_job_template_validation_checks_workload_labels_without_gang_scheduling() -> None:
    with pytest.raises(PlatformError, match="reserved"):
        validate_resolved_job_template(_js({"certify.glimmer.ai/job": "x"}), [], None)
    with pytest.raises(PlatformError, match="at most 32"):
        validate_resolved_job_template(_js({f"k{i}": "v" for i in range(33)}), [], None)


def test_job_template_validation_checks_the_gang_contract_when_an_intent_is_set() -> None:
    with pytest.raises(PlatformError, match="conflicting"):
        validate_resolved_job_template(_js({"kai.scheduler/queue": "x"}), _deps(), GS)
    assert validate_resolved_job_template(_js(), _deps(), GS)["workloadMetadata"]
