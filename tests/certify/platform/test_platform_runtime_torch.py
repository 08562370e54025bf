"""BuildTorchRuntime, BuildExecRuntime, the GPU resource rule and builder-side gang scheduling."""

from __future__ import annotations

import json

from trainer_shapes import jobs, pod

from glimmer.certify.platform import RuntimeConfig, build_exec_runtime, build_torch_runtime

CFG = RuntimeConfig(entry_name="train", image="img:1", nodes_per_job=2, gpus_per_node=8)


def test_torch_runtime_has_torch_ml_policy_and_a_single_node_replicated_job() -> None:
    rt = build_torch_runtime(CFG)
    assert rt["apiVersion"] == "trainer.kubeflow.org/v1alpha1"
    assert rt["kind"] == "TrainingRuntime"
    assert rt["metadata"] == {
        "name": "train-runtime",
        "labels": {"trainer.kubeflow.org/framework": "torch", "app": "train"},
    }
    assert rt["spec"]["mlPolicy"] == {"numNodes": 2, "torch": {"numProcPerNode": 8}}
    assert [j["name"] for j in jobs(rt)] == ["node"]
    node = jobs(rt)[0]
    assert node["template"]["metadata"]["labels"] == {
        "trainer.kubeflow.org/trainjob-ancestor-step": "trainer",
        "app": "train",
    }
    spec = pod(node)
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    assert spec["containers"][0]["name"] == "node"
    assert spec["volumes"][0] == {"name": "dshm", "emptyDir": {"medium": "Memory"}}
    assert spec["containers"][0]["volumeMounts"][0] == {"name": "dshm", "mountPath": "/dev/shm"}


def test_torch_runtime_user_volumes_mounts_and_init_containers_follow_the_builtins() -> None:
    cfg = RuntimeConfig(
        entry_name="t",
        image="i",
        volumes=[{"name": "data", "emptyDir": {}}],
        volume_mounts=[{"name": "data", "mountPath": "/data"}],
        init_containers=[{"name": "prep", "image": "busybox"}],
    )
    spec = pod(jobs(build_torch_runtime(cfg))[0])
    assert [v["name"] for v in spec["volumes"]] == ["dshm", "data"]
    assert [m["name"] for m in spec["containers"][0]["volumeMounts"]] == ["dshm", "data"]
    assert spec["initContainers"] == [{"name": "prep", "image": "busybox"}]


def test_exec_runtime_is_the_single_job_layout_with_torch_ml_policy() -> None:
    assert build_exec_runtime(CFG) == build_torch_runtime(CFG)


def test_runtime_without_gang_scheduler_has_no_scheduler_name_and_no_queue_label() -> None:
    text = json.dumps(build_torch_runtime(CFG))
    assert "schedulerName" not in text and "kai.scheduler/queue" not in text
    assert "metadata" not in jobs(build_torch_runtime(CFG))[0]["template"]["spec"]["template"]


def test_runtime_with_gang_scheduler_and_no_queue_uses_default_queue_on_job_and_pod() -> None:
    cfg = RuntimeConfig(entry_name="t", image="i", gang_scheduler_name="kai-scheduler")
    node = jobs(build_torch_runtime(cfg))[0]
    assert pod(node)["schedulerName"] == "kai-scheduler"
    assert node["template"]["metadata"]["labels"]["kai.scheduler/queue"] == "default-queue"
    pod_labels = node["template"]["spec"]["template"]["metadata"]["labels"]
    assert pod_labels == {"kai.scheduler/queue": "default-queue"}


def test_builder_gang_uses_the_configured_queue_label_key() -> None:
    cfg = RuntimeConfig(
        entry_name="t",
        image="i",
        gang_scheduler_name="runai-scheduler",
        gang_scheduler_queue="q1",
        gang_scheduler_queue_label_key="runai/queue",
    )
    node = jobs(build_torch_runtime(cfg))[0]
    assert node["template"]["metadata"]["labels"]["runai/queue"] == "q1"


def test_resources_unset_request_only_the_gpus() -> None:
    resources = pod(jobs(build_torch_runtime(CFG))[0])["containers"][0]["resources"]
    assert resources == {"limits": {"nvidia.com/gpu": "8"}, "requests": {"nvidia.com/gpu": "8"}}


def test_user_resources_without_the_gpu_key_get_gpu_limits_and_requests_added() -> None:
    cfg = RuntimeConfig(
        entry_name="t", image="i", gpus_per_node=4, resources={"limits": {"cpu": "8"}}
    )
    resources = pod(jobs(build_torch_runtime(cfg))[0])["containers"][0]["resources"]
    assert resources == {
        "limits": {"cpu": "8", "nvidia.com/gpu": "4"},
        "requests": {"nvidia.com/gpu": "4"},
    }


def test_user_resources_naming_the_gpu_anywhere_even_zero_are_left_untouched() -> None:
    given = {"requests": {"nvidia.com/gpu": "0", "cpu": "1"}}
    cfg = RuntimeConfig(entry_name="t", image="i", gpus_per_node=4, resources=given)
    resources = pod(jobs(build_torch_runtime(cfg))[0])["containers"][0]["resources"]
    assert resources == given


def test_builders_do_not_place_image_pull_secrets_in_the_runtime() -> None:
    cfg = RuntimeConfig(entry_name="t", image="i", image_pull_secrets=[{"name": "pull"}])
    assert "imagePullSecrets" not in json.dumps(build_torch_runtime(cfg))
