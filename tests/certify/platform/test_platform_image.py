"""ApplyImageToDependencies and ApplyImageToJobTemplate."""

from __future__ import annotations

import copy
from typing import Any

from trainer_shapes import job, job_template, jobs, mpi_runtime, pod, torch_runtime

from glimmer.certify.platform import apply_image_to_dependencies, apply_image_to_job_template

Obj = dict[str, Any]
NEW = "registry/new:2"


def test_image_replaces_the_primary_container_of_launcher_and_worker() -> None:
    (rt,) = apply_image_to_dependencies([mpi_runtime(image="old:1")], NEW)
    assert [pod(j)["containers"][0]["image"] for j in jobs(rt)] == [NEW, NEW]


def test_image_init_containers_sharing_the_primarys_old_image_follow_it() -> None:
    rt = torch_runtime(image="old:1")
    pod(jobs(rt)[0])["initContainers"] = [{"name": "megatron-clone", "image": "old:1"}]
    (out,) = apply_image_to_dependencies([rt], NEW)
    assert pod(jobs(out)[0])["initContainers"][0]["image"] == NEW
    (mpi,) = apply_image_to_dependencies([mpi_runtime(image="old:1")], NEW)
    assert pod(job(mpi, "launcher"))["initContainers"][0]["image"] == NEW


def test_image_init_containers_with_a_distinct_image_stay_pinned() -> None:
    rt = torch_runtime(image="repo/app:1")
    pod(jobs(rt)[0])["initContainers"] = [
        {"name": "tcpxo-daemon", "image": "gcr.io/rxdm:3"},
        {"name": "same-repo", "image": "repo/app:2"},
    ]
    (out,) = apply_image_to_dependencies([rt], NEW)
    assert [c["image"] for c in pod(jobs(out)[0])["initContainers"]] == [
        "gcr.io/rxdm:3",
        "repo/app:2",
    ]


def test_image_never_touches_non_init_containers_beyond_index_0() -> None:
    rt = torch_runtime(image="old:1")
    pod(jobs(rt)[0])["containers"].append({"name": "sidecar", "image": "old:1"})
    (out,) = apply_image_to_dependencies([rt], NEW)
    assert pod(jobs(out)[0])["containers"][1]["image"] == "old:1"


def test_image_is_a_strict_no_op_when_empty() -> None:
    deps = [mpi_runtime()]
    assert apply_image_to_dependencies(deps, "") == deps


def test_image_never_creates_structure_a_job_without_containers_is_left_alone() -> None:
    rt = torch_runtime()
    del pod(jobs(rt)[0])["containers"]
    before = copy.deepcopy(rt)
    assert apply_image_to_dependencies([rt], NEW) == [before]


def test_image_leaves_non_training_runtime_dependencies_untouched() -> None:
    pod_dep = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"image": "a"}]}}
    assert apply_image_to_dependencies([pod_dep], NEW) == [pod_dep]


def test_image_to_job_template_points_the_trainer_at_the_image() -> None:
    out = apply_image_to_job_template(job_template("r"), NEW)
    assert out["spec"]["workload"]["trainJob"]["trainer"]["image"] == NEW


def test_image_to_job_template_is_a_no_op_when_empty() -> None:
    jt = job_template("r")
    assert apply_image_to_job_template(jt, "") == jt


def test_image_to_job_template_without_a_train_job_is_left_alone() -> None:
    jt: Obj = {"spec": {"workload": {}}}
    assert apply_image_to_job_template(jt, NEW) == {"spec": {"workload": {}}}


def test_image_to_job_template_without_a_trainer_is_left_alone() -> None:
    jt = job_template("r")
    del jt["spec"]["workload"]["trainJob"]["trainer"]
    before = copy.deepcopy(jt)
    assert apply_image_to_job_template(jt, NEW) == before
