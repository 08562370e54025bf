"""ApplyResolvedWorkflowTransforms (the pinned order) and ApplyWorkloadRunScheduling."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from trainer_shapes import job_template, jobs, mpi_runtime, pod, torch_runtime

from glimmer.certify.platform import (
    PlatformError,
    ResolvedWorkflowTransforms,
    apply_resolved_workflow_transforms,
    apply_workload_run_scheduling,
    env_write,
    gang,
    image,
    transforms,
    validate_gang,
)

Obj = dict[str, Any]
GS = {"schedulerName": "kai-scheduler", "queue": "team-a"}


def _spec(runtime: Obj | None = None, labels: dict[str, str] | None = None) -> Obj:
    rt = runtime or torch_runtime()
    jt = job_template(rt["metadata"]["name"])
    if labels is not None:
        jt["spec"]["workloadMetadata"] = {"labels": labels}
    return {"dependencies": [rt], "jobTemplate": jt}


def _labels(spec: Obj) -> Any:
    return spec["jobTemplate"]["spec"].get("workloadMetadata", {}).get("labels")


def test_transforms_run_in_the_pinned_order(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def spy(module: Any, name: str) -> None:
        real: Callable[..., Any] = getattr(module, name)

        def wrapper(*args: Any) -> Any:
            calls.append(name)
            return real(*args)

        monkeypatch.setattr(module, name, wrapper)

    spy(gang, "apply_gang_scheduler_to_dependencies")
    spy(image, "apply_image_to_job_template")
    spy(image, "apply_image_to_dependencies")
    spy(env_write, "apply_env_to_job_template")
    spy(transforms, "compose_workload_metadata")
    spy(validate_gang, "validate_resolved_job_template")
    t = ResolvedWorkflowTransforms(GS, "img:2", [{"name": "A", "value": "1"}], {"team": "x"})
    apply_resolved_workflow_transforms(_spec(), t)
    assert calls == [
        "apply_gang_scheduler_to_dependencies",
        "apply_image_to_job_template",
        "apply_image_to_dependencies",
        "apply_env_to_job_template",
        "compose_workload_metadata",
        "validate_resolved_job_template",
    ]


def test_catalog_labels_are_the_base_map_and_owner_labels_overlay_them() -> None:
    spec = _spec(labels={"team": "catalog", "tier": "gold"})
    out = apply_resolved_workflow_transforms(
        spec, ResolvedWorkflowTransforms(workload_labels={"team": "mine"})
    )
    assert _labels(out) == {"team": "mine", "tier": "gold"}


def test_gang_scheduler_derives_the_workload_queue_label_and_records_the_intent() -> None:
    out = apply_resolved_workflow_transforms(_spec(), ResolvedWorkflowTransforms(gang_scheduler=GS))
    assert _labels(out) == {"kai.scheduler/queue": "team-a"}
    assert out["gangScheduler"] == {**GS, "queueLabelKey": "kai.scheduler/queue"}
    assert pod(jobs(out["dependencies"][0])[0])["schedulerName"] == "kai-scheduler"


def test_gang_scheduler_queue_omitted_uses_the_default_queue() -> None:
    t = ResolvedWorkflowTransforms(gang_scheduler={"schedulerName": "kai-scheduler"})
    assert _labels(apply_resolved_workflow_transforms(_spec(), t)) == {
        "kai.scheduler/queue": "default-queue"
    }


def test_gang_scheduler_runai_custom_queue_label_key() -> None:
    gs = {"schedulerName": "runai-scheduler", "queue": "q", "queueLabelKey": "runai/queue"}
    out = apply_resolved_workflow_transforms(_spec(), ResolvedWorkflowTransforms(gang_scheduler=gs))
    assert _labels(out) == {"runai/queue": "q"}


def test_explicit_queue_label_matching_the_gang_is_idempotent() -> None:
    spec = _spec(labels={"kai.scheduler/queue": "team-a"})
    out = apply_resolved_workflow_transforms(spec, ResolvedWorkflowTransforms(gang_scheduler=GS))
    assert _labels(out) == {"kai.scheduler/queue": "team-a"}


def test_explicit_queue_label_conflicting_with_the_gang_fails() -> None:
    t = ResolvedWorkflowTransforms(gang_scheduler=GS, workload_labels={"kai.scheduler/queue": "b"})
    with pytest.raises(PlatformError, match='conflicting label value "b", expected "team-a"'):
        apply_resolved_workflow_transforms(_spec(), t)


def test_reserved_workload_label_key_is_rejected() -> None:
    t = ResolvedWorkflowTransforms(workload_labels={"app.kubernetes.io/managed-by": "me"})
    with pytest.raises(PlatformError, match="reserved"):
        apply_resolved_workflow_transforms(_spec(), t)


def test_the_label_cap_is_checked_after_the_queue_label_is_inserted() -> None:
    t = ResolvedWorkflowTransforms(
        gang_scheduler=GS, workload_labels={f"k{i}": "v" for i in range(32)}
    )
    with pytest.raises(PlatformError, match="33 labels"):
        apply_resolved_workflow_transforms(_spec(), t)


def test_image_still_reaches_trainer_and_runtime() -> None:
    out = apply_resolved_workflow_transforms(_spec(), ResolvedWorkflowTransforms(image="img:9"))
    assert out["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["image"] == "img:9"
    assert pod(jobs(out["dependencies"][0])[0])["containers"][0]["image"] == "img:9"


def test_env_reaches_mpi_ranks_through_the_pinned_stage() -> None:
    spec = _spec(mpi_runtime())
    t = ResolvedWorkflowTransforms(env=[{"name": "A", "value": "1"}])
    out = apply_resolved_workflow_transforms(spec, t)
    assert out["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["args"] == ["-x", "A=1"]


def test_labels_only_without_gang_scheduler_records_no_intent() -> None:
    out = apply_resolved_workflow_transforms(
        _spec(), ResolvedWorkflowTransforms(workload_labels={"a": "b"})
    )
    assert _labels(out) == {"a": "b"}
    assert "gangScheduler" not in out


def test_nothing_configured_is_a_no_op() -> None:
    spec = _spec()
    before = copy.deepcopy(spec)
    assert apply_resolved_workflow_transforms(spec, ResolvedWorkflowTransforms()) == before
    assert spec == before


def test_workload_run_scheduling_composes_labels_and_records_the_intent() -> None:
    spec = _spec()
    out = apply_workload_run_scheduling(spec, GS, {"labels": {"team": "x"}})
    assert _labels(out) == {"team": "x", "kai.scheduler/queue": "team-a"}
    assert out["gangScheduler"]["queueLabelKey"] == "kai.scheduler/queue"


def test_workload_run_scheduling_rewrites_no_dependency() -> None:
    spec = _spec()
    out = apply_workload_run_scheduling(spec, GS, None)
    assert out["dependencies"] == spec["dependencies"]
    assert "schedulerName" not in str(out["dependencies"])
