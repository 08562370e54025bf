"""Shapes the platform tests share: runtimes as the builders make them, and accessors."""

from __future__ import annotations

from typing import Any

from glimmer.certify.platform import RuntimeConfig, build_mpi_runtime, build_torch_runtime

Obj = dict[str, Any]


def torch_runtime(name: str = "train", image: str = "img:1") -> Obj:
    return build_torch_runtime(RuntimeConfig(entry_name=name, image=image, gpus_per_node=8))


def mpi_runtime(name: str = "nccl", image: str = "img:1") -> Obj:
    return build_mpi_runtime(RuntimeConfig(entry_name=name, image=image, gpus_per_node=8))


def job_template(runtime: str, args: list[str] | None = None) -> Obj:
    trainer: Obj = {"image": "img:1", "command": ["mpirun"], "args": list(args or [])}
    return {
        "spec": {
            "workload": {
                "trainJob": {
                    "runtimeRef": {"name": runtime, "kind": "TrainingRuntime"},
                    "trainer": trainer,
                }
            }
        }
    }


def jobs(runtime: Obj) -> list[Obj]:
    found: list[Obj] = runtime["spec"]["template"]["spec"]["replicatedJobs"]
    return found


def job(runtime: Obj, name: str) -> Obj:
    return next(j for j in jobs(runtime) if j["name"] == name)


def pod(job_: Obj) -> Obj:
    found: Obj = job_["template"]["spec"]["template"]["spec"]
    return found
