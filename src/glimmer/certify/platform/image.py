"""Replacing the workload image after overrides resolve (a Certification's options.image).

The image of the primary container (containers[0]) of every replicated job is replaced. Init
containers that ran exactly the primary's old image are derived from the workload (the MPI
launcher's fix-ssh-permissions, training's megatron-clone), so they follow it; init containers
with any other image are infrastructure (GCP's tcpxo-daemon) and stay pinned. Nothing here
creates structure: a shape that does not match is returned as it was.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.certify.platform.walk import check_dependencies, get_path, training_runtime_jobs

Obj = dict[str, Any]


def _replace_in_job(job: Obj, image: str) -> None:
    pod = get_path(job, "template", "spec", "template", "spec")
    containers = get_path(pod, "containers")
    if not isinstance(containers, list) or not containers or not isinstance(containers[0], dict):
        return
    primary = containers[0]
    previous = primary.get("image")
    primary["image"] = image
    if not previous:
        return
    for init in get_path(pod, "initContainers") or []:
        if isinstance(init, dict) and init.get("image") == previous:
            init["image"] = image


def apply_image_to_dependencies(deps: Sequence[Any], image: str) -> list[Any]:
    """Every TrainingRuntime dependency with its primary containers (and the init containers
    sharing their old image) on ``image``. A strict no-op (a plain copy) when image is empty."""
    out = copy.deepcopy(list(deps))
    if not image:
        return out
    check_dependencies(out)
    for dep in out:
        for job in training_runtime_jobs(dep):
            _replace_in_job(job, image)
    return out


def apply_image_to_job_template(jt: Mapping[str, Any], image: str) -> Obj:
    """The job template with its trainer on ``image``
    (``spec.workload.trainJob.trainer.image``). A no-op when image is empty or the template has
    no trainJob workload or no trainer: there is no trainer image to replace."""
    out: Obj = copy.deepcopy(dict(jt))
    trainer = get_path(out, "spec", "workload", "trainJob", "trainer")
    if image and isinstance(trainer, dict):
        trainer["image"] = image
    return out
