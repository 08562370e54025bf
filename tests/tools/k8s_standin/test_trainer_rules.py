"""The Trainer stand-in's pure rules: which certification job a trainer command line runs
(trainer_jobs), how runtime patches and the trainer compose the JobSet's pods
(trainer_template), and the scheduler's weighing of GPUs a node declares."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.certify.jobs import GIB, DcgmJob, NcclJob, TrainingJob
from tools.k8s_standin.kubelet_scheduler import choose
from tools.k8s_standin.trainer_jobs import NotAJob, job_of, parse_size
from tools.k8s_standin.trainer_template import (
    ANCESTOR_LABEL,
    COMPLETION_INDEX,
    JOBSET_NAME,
    merge,
    plan_pods,
)

Obj = dict[str, Any]
MPIRUN = ["timeout", "3600", "/usr/local/mpi/bin/mpirun", "-N", "8", "-x", "NCCL_DEBUG=INFO"]


def test_an_nccl_tests_command_line_is_that_collective_with_its_sizes_and_mnnvl() -> None:
    argv = [*MPIRUN, "-x", "NCCL_MNNVL_ENABLE=0", "/usr/local/bin/all_gather_perf_mpi"]
    job = job_of("j", [*argv, "-b", "1M", "-e", "2G", "-f", "2"], {}, ("a", "b"), 5)
    assert job == NcclJob("j", "all_gather", ("a", "b"), False, 2 * GIB, 1 << 20, seed=5)
    # MNNVL unset on the command line: the container's env says, else NCCL's default (on).
    bare = job_of("j", ["alltoall_perf"], {"NCCL_MNNVL_ENABLE": "1"}, ("a",), 0)
    assert isinstance(bare, NcclJob) and bare.nvlink and bare.max_bytes == 16 * GIB


def test_dcgmi_diag_is_a_one_node_diagnostic_at_its_run_level() -> None:
    argv = ["dcgmi", "diag", "--host", "dcgm:5555", "--run", "3", "--json"]
    assert job_of("j", argv, {}, ("n1",), 2) == DcgmJob("n1", 3, 2)
    with pytest.raises(NotAJob, match="one node"):
        job_of("j", argv, {}, ("n1", "n2"), 0)


def test_any_other_command_is_training_with_the_megatron_scripts_env() -> None:
    env = {"TRAIN_ITERS": "400", "ENABLE_CHECKPOINT": "true", "SAVE_INTERVAL": "50"}
    job = job_of("t", ["/bin/bash", "/config/train.sh"], env, ("a", "b"), 1)
    assert job == TrainingJob("t", ("a", "b"), 400, True, 50, seed=1)


def test_sizes_read_as_nccl_tests_reads_them() -> None:
    assert [parse_size(s) for s in ("8", "4k", "512M", "16G")] == [8, 4096, 512 << 20, 16 * GIB]
    with pytest.raises(NotAJob, match="size"):
        parse_size("lots")


def test_a_patch_merges_maps_named_lists_by_name_and_appends_tolerations() -> None:
    base = {
        "containers": [{"name": "node", "env": [{"name": "A", "value": "1"}]}],
        "tolerations": [{"operator": "Exists"}],
        "nodeSelector": {"x": "1"},
    }
    patch = {
        "containers": [{"name": "node", "env": [{"name": "B", "value": "2"}]}],
        "tolerations": [{"key": "gpu", "operator": "Exists"}],
        "nodeSelector": {"y": "2"},
    }
    assert merge(base, patch) == {
        "containers": [
            {"name": "node", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}
        ],
        "tolerations": [{"operator": "Exists"}, {"key": "gpu", "operator": "Exists"}],
        "nodeSelector": {"x": "1", "y": "2"},
    }


def _torch() -> tuple[Obj, Obj]:
    container = {"name": "node", "image": "base:1", "command": ["sleep"]}
    runtime = {
        "metadata": {"name": "rt"},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": 4}},
            "template": {
                "spec": {
                    "replicatedJobs": [
                        {
                            "name": "node",
                            "template": {
                                "metadata": {"labels": {ANCESTOR_LABEL: "trainer"}},
                                "spec": {"template": {"spec": {"containers": [container]}}},
                            },
                        }
                    ]
                }
            },
        },
    }
    train_job = {
        "metadata": {"name": "tj", "namespace": "ns", "uid": "0123456789"},
        "spec": {
            "runtimeRef": {"name": "rt"},
            "trainer": {"image": "mine:2", "command": ["train"], "numNodes": 3},
            "runtimePatches": [
                {
                    "manager": "m",
                    "trainingRuntimeSpec": {
                        "template": {
                            "spec": {
                                "replicatedJobs": [
                                    {
                                        "name": "node",
                                        "template": {
                                            "spec": {
                                                "template": {
                                                    "metadata": {"labels": {"job": "j1"}},
                                                    "spec": {"nodeSelector": {"pool": "a"}},
                                                }
                                            }
                                        },
                                    }
                                ]
                            }
                        }
                    },
                }
            ],
        },
    }
    return runtime, train_job


def test_a_torch_trainjob_is_one_pod_per_node_with_the_trainer_and_the_rendezvous_env() -> None:
    runtime, train_job = _torch()
    pods = plan_pods(train_job, runtime)
    assert [p.name[: -len("-xxxxx")] for p in pods] == ["tj-node-0-0", "tj-node-0-1", "tj-node-0-2"]
    assert [p.name for p in pods] == [p.name for p in plan_pods(train_job, runtime)]  # stable
    for index, pod in enumerate(pods):
        meta, spec = pod.obj["metadata"], pod.obj["spec"]
        assert meta["labels"][JOBSET_NAME] == "tj" and meta["labels"]["job"] == "j1"
        assert meta["labels"][COMPLETION_INDEX] == str(index)
        assert meta["ownerReferences"][0]["kind"] == "TrainJob"
        assert spec["nodeSelector"] == {"pool": "a"} and spec["subdomain"] == "tj"
        (container,) = spec["containers"]
        assert (container["image"], container["command"]) == ("mine:2", ["train"])
        env = {e["name"]: e["value"] for e in container["env"]}
        assert env["PET_NODE_RANK"] == str(index) and env["PET_NNODES"] == "3"
        assert env["PET_NPROC_PER_NODE"] == "4" and env["PET_MASTER_ADDR"] == "tj-node-0-0.tj"


def _gpu_node(name: str, gpus: int | None) -> Obj:
    status = {"allocatable": {"nvidia.com/gpu": str(gpus)}} if gpus is not None else {}
    return {"metadata": {"name": name, "labels": {}}, "spec": {}, "status": status}


def _gpu_pod(gpus: int) -> Obj:
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": resources}]},
    }


def test_gpus_a_node_declares_are_filled_by_the_pods_placed_on_it() -> None:
    nodes = [_gpu_node("a", 8), _gpu_node("b", 8)]
    assert choose(_gpu_pod(8), nodes, {"a": {"nvidia.com/gpu": 8.0}}) == ("b", "")
    full = {"a": {"nvidia.com/gpu": 8.0}, "b": {"nvidia.com/gpu": 4.0}}
    assert choose(_gpu_pod(8), nodes, full) == (
        None,
        "0/2 nodes are available: 2 node(s) Insufficient nvidia.com/gpu.",
    )
    assert choose(_gpu_pod(4), nodes, full) == ("b", "")
    # A node that declares no GPU is not weighed, as before (the stand-in's plain nodes).
    assert choose(_gpu_pod(8), [_gpu_node("plain", None)], {"plain": {"x/y": 1.0}}) == ("plain", "")
