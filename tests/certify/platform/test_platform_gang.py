"""ApplyGangSchedulerToDependencies and ResolvedGangScheduler."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from trainer_shapes import job, jobs, mpi_runtime, pod, torch_runtime

from glimmer.certify.platform import (
    PlatformError,
    apply_gang_scheduler_to_dependencies,
    resolved_gang_scheduler,
)

Obj = dict[str, Any]


def _catalog_torch() -> Obj:
    # A catalog entry's runtime: a hardcoded default-scheduler and no metadata at all.
    rt = torch_runtime()
    node = jobs(rt)[0]
    del node["template"]["metadata"]
    pod(node)["schedulerName"] = "default-scheduler"
    return rt


def test_gang_sets_scheduler_name_on_every_replicated_jobs_pod_spec(gs_kai: Obj) -> None:
    (rt,) = apply_gang_scheduler_to_dependencies([mpi_runtime()], gs_kai)
    assert [pod(j)["schedulerName"] for j in jobs(rt)] == ["kai-scheduler"] * 2


def test_gang_puts_the_queue_label_on_the_job_template_metadata(gs_kai: Obj) -> None:
    (rt,) = apply_gang_scheduler_to_dependencies([_catalog_torch()], gs_kai)
    assert jobs(rt)[0]["template"]["metadata"]["labels"] == {"kai.scheduler/queue": "team-a"}


def test_gang_puts_the_queue_label_on_the_pod_template_metadata_too(gs_kai: Obj) -> None:
    (rt,) = apply_gang_scheduler_to_dependencies([_catalog_torch()], gs_kai)
    labels = jobs(rt)[0]["template"]["spec"]["template"]["metadata"]["labels"]
    assert labels == {"kai.scheduler/queue": "team-a"}


def test_gang_queue_label_key_omitted_uses_the_kai_default_and_queue_the_default_queue() -> None:
    (rt,) = apply_gang_scheduler_to_dependencies([_catalog_torch()], {"schedulerName": "x"})
    assert jobs(rt)[0]["template"]["metadata"]["labels"] == {"kai.scheduler/queue": "default-queue"}


def test_gang_custom_queue_label_key_for_runai() -> None:
    gs = {"schedulerName": "runai-scheduler", "queue": "q", "queueLabelKey": "runai/queue"}
    (rt,) = apply_gang_scheduler_to_dependencies([mpi_runtime()], gs)
    for j in jobs(rt):
        assert j["template"]["metadata"]["labels"]["runai/queue"] == "q"
    assert job(rt, "launcher")["dependsOn"] == [{"name": "node", "status": "Ready"}]


def test_gang_mpi_launcher_keeps_its_existing_labels(gs_kai: Obj) -> None:
    (rt,) = apply_gang_scheduler_to_dependencies([mpi_runtime()], gs_kai)
    assert job(rt, "launcher")["template"]["metadata"]["labels"] == {
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer",
        "kai.scheduler/queue": "team-a",
    }


def test_gang_scheduler_name_is_overwritten_unconditionally(gs_kai: Obj) -> None:
    (rt,) = apply_gang_scheduler_to_dependencies([_catalog_torch()], gs_kai)
    assert pod(jobs(rt)[0])["schedulerName"] == "kai-scheduler"


def test_gang_kai_mpi_deletes_launcher_gate_and_startup_policy_and_appends_wait(
    gs_kai: Obj,
) -> None:
    rt = mpi_runtime()
    rt["spec"]["template"]["spec"]["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    (out,) = apply_gang_scheduler_to_dependencies([rt], gs_kai)
    launcher = job(out, "launcher")
    assert "dependsOn" not in launcher
    assert "startupPolicy" not in out["spec"]["template"]["spec"]
    inits = pod(launcher)["initContainers"]
    assert [c["name"] for c in inits] == ["fix-ssh-permissions", "wait-for-workers"]
    wait = inits[1]
    assert wait["image"] == "img:1"
    assert [m["name"] for m in wait["volumeMounts"]] == ["mpi-hostfile", "mpi-ssh-auth", "ssh-keys"]


def test_gang_kai_rewrite_is_idempotent(gs_kai: Obj) -> None:
    once = apply_gang_scheduler_to_dependencies([mpi_runtime()], gs_kai)
    rt = copy.deepcopy(once[0])
    job(rt, "launcher")["dependsOn"] = [{"name": "node", "status": "Ready"}]
    (twice,) = apply_gang_scheduler_to_dependencies([rt], gs_kai)
    names = [c["name"] for c in pod(job(twice, "launcher"))["initContainers"]]
    assert names.count("wait-for-workers") == 1


def test_gang_kai_keeps_a_dependency_that_is_not_the_launchers_node_ready_gate(
    gs_kai: Obj,
) -> None:
    rt = mpi_runtime()
    other = [{"name": "node", "status": "Complete"}]
    job(rt, "launcher")["dependsOn"] = other
    (out,) = apply_gang_scheduler_to_dependencies([rt], gs_kai)
    assert job(out, "launcher")["dependsOn"] == other
    assert "wait-for-workers" not in str(out)


def test_gang_kai_leaves_a_torch_runtime_job_called_launcher_alone(gs_kai: Obj) -> None:
    rt = torch_runtime()
    jobs(rt)[0]["name"] = "launcher"
    jobs(rt)[0]["dependsOn"] = [{"name": "node", "status": "Ready"}]
    (out,) = apply_gang_scheduler_to_dependencies([rt], gs_kai)
    assert jobs(out)[0]["dependsOn"] == [{"name": "node", "status": "Ready"}]


def test_gang_non_kai_mpi_keeps_the_launcher_gate() -> None:
    (rt,) = apply_gang_scheduler_to_dependencies([mpi_runtime()], {"schedulerName": "volcano"})
    assert job(rt, "launcher")["dependsOn"] == [{"name": "node", "status": "Ready"}]


def test_gang_is_a_no_op_when_gs_is_nil() -> None:
    deps = [_catalog_torch()]
    assert apply_gang_scheduler_to_dependencies(deps, None) == deps


def test_gang_is_a_no_op_when_the_scheduler_name_is_empty() -> None:
    deps = [_catalog_torch()]
    assert apply_gang_scheduler_to_dependencies(deps, {"schedulerName": "", "queue": "q"}) == deps


def test_gang_leaves_non_training_runtime_dependencies_untouched(gs_kai: Obj) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
    assert apply_gang_scheduler_to_dependencies([cm], gs_kai) == [cm]


@pytest.mark.parametrize(
    "spec",
    [{}, {"template": {}}, {"template": {"spec": {"replicatedJobs": "x"}}}],
)
def test_gang_skips_malformed_shapes_silently(gs_kai: Obj, spec: Obj) -> None:
    dep = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainingRuntime", "spec": spec}
    assert apply_gang_scheduler_to_dependencies([dep], gs_kai) == [dep]


def test_gang_refuses_a_dependency_that_is_not_an_object(gs_kai: Obj) -> None:
    with pytest.raises(PlatformError, match="unmarshal dependency 1"):
        apply_gang_scheduler_to_dependencies([torch_runtime(), "junk"], gs_kai)


def test_gang_does_not_change_its_input(gs_kai: Obj) -> None:
    deps = [mpi_runtime()]
    before = copy.deepcopy(deps)
    apply_gang_scheduler_to_dependencies(deps, gs_kai)
    assert deps == before


def test_resolved_gang_scheduler_fills_queue_and_queue_label_key_defaults() -> None:
    assert resolved_gang_scheduler({"schedulerName": "kai-scheduler"}) == {
        "schedulerName": "kai-scheduler",
        "queue": "default-queue",
        "queueLabelKey": "kai.scheduler/queue",
    }


@pytest.mark.parametrize("gs", [None, {}, {"schedulerName": ""}])
def test_resolved_gang_scheduler_is_nil_when_nothing_is_configured(gs: Obj | None) -> None:
    assert resolved_gang_scheduler(gs) is None


def test_resolved_gang_scheduler_returns_a_copy() -> None:
    gs = {"schedulerName": "s", "queue": "q"}
    resolved_gang_scheduler(gs)
    assert gs == {"schedulerName": "s", "queue": "q"}


def test_gang_rewrite_matches_what_the_builders_emit_for_a_workload_run() -> None:
    from glimmer.certify.platform import RuntimeConfig, build_mpi_runtime, build_torch_runtime

    gs = {"schedulerName": "volcano", "queue": "q", "queueLabelKey": "volcano/queue"}
    plain = RuntimeConfig(entry_name="e", image="i", gpus_per_node=8)
    gang = RuntimeConfig(
        entry_name="e",
        image="i",
        gpus_per_node=8,
        gang_scheduler_name="volcano",
        gang_scheduler_queue="q",
        gang_scheduler_queue_label_key="volcano/queue",
    )
    for build in (build_torch_runtime, build_mpi_runtime):
        assert apply_gang_scheduler_to_dependencies([build(plain)], gs) == [build(gang)]
