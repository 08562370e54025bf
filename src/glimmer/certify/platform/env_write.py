"""Writing a Certification's resolved env (spec.env, options.env) onto a resolved job template.

Where a variable lands depends on how the entry launches its ranks:

* MPI: ``-x NAME=VALUE`` pairs in trainer.args. Ranks start under sshd with a fresh environment
  and never read container env, so a trainer env var would reach mpirun's container and no rank.
* Everything else: a trainer env var. Trainer upserts it by name onto the "node" container of the
  ancestor job, where the workload runs, and that upsert already wins over the runtime's own value,
  so no dependency is rewritten.

The shape is read from the referenced TrainingRuntime's mlPolicy, never guessed from the args:
"has a -x pair" conflates being MPI with having an anchor, and an MPI entry without -x pairs would
then get env its ranks never read.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.certify.platform.env import FORWARD_FLAG, forward_arg
from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.vocab import TRAINING_RUNTIME
from glimmer.certify.platform.walk import get_path

Obj = dict[str, Any]


def launches_with_mpi(jt: Mapping[str, Any], deps: Sequence[Any]) -> bool:
    """Whether the TrainingRuntime the job template references has an MPI mlPolicy."""
    name = get_path(jt, "spec", "workload", "trainJob", "runtimeRef", "name")
    for dep in deps:
        if (
            isinstance(dep, dict)
            and dep.get("kind") == TRAINING_RUNTIME
            and get_path(dep, "metadata", "name") == name
        ):
            return get_path(dep, "spec", "mlPolicy", "mpi") is not None
    raise PlatformError(
        f"spec.jobTemplate.spec.workload.trainJob.runtimeRef: TrainingRuntime {name!r} is not "
        "among the dependencies, so how the entry launches its ranks is unknown"
    )


def _write_mpi_args(args: list[Any], env: Sequence[Mapping[str, Any]]) -> list[Any]:
    out = list(args)
    positions = {
        str(out[i + 1]).split("=", 1)[0]: i + 1
        for i in range(len(out) - 1)
        if out[i] == FORWARD_FLAG
    }
    fresh: list[str] = []
    for var in env:
        name = var.get("name")
        if name in positions:
            out[positions[name]] = forward_arg(var)  # the owner's value replaces the catalog's
        else:
            fresh += [FORWARD_FLAG, forward_arg(var)]
    # New pairs join the existing -x pairs, or lead the mpirun options when there are none:
    # either way they come before the program mpirun starts.
    anchor = max(positions.values(), default=-1) + 1
    return out[:anchor] + fresh + out[anchor:]


def _write_trainer_env(current: list[Any], env: Sequence[Mapping[str, Any]]) -> list[Any]:
    out = [copy.deepcopy(v) for v in current]
    index = {v.get("name"): i for i, v in enumerate(out) if isinstance(v, dict)}
    for var in env:
        item = dict(copy.deepcopy(var))
        if item.get("name") in index:
            out[index[item["name"]]] = item
        else:
            out.append(item)
    return out


def apply_env_to_job_template(
    jt: Mapping[str, Any], deps: Sequence[Any], env: Sequence[Mapping[str, Any]]
) -> Obj:
    """The job template with ``env`` written where the entry's ranks will read it.

    A no-op when env is empty; it never creates structure: a template without a trainJob
    workload or without a trainer has nowhere to put a variable and comes back as it was.
    """
    out: Obj = copy.deepcopy(dict(jt))
    trainer = get_path(out, "spec", "workload", "trainJob", "trainer")
    if not env or not isinstance(trainer, dict):
        return out
    if launches_with_mpi(out, deps):
        trainer["args"] = _write_mpi_args(list(trainer.get("args") or []), env)
    else:
        trainer["env"] = _write_trainer_env(list(trainer.get("env") or []), env)
    return out
