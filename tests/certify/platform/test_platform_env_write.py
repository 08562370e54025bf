"""ApplyEnvToJobTemplate: where the owner's env lands, read from the runtime's mlPolicy."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from trainer_shapes import job_template, mpi_runtime, torch_runtime

from glimmer.certify.platform import PlatformError, apply_env_to_job_template

Obj = dict[str, Any]
ENV = [{"name": "NCCL_NVLS_ENABLE", "value": "0"}]


def _trainer(jt: Obj) -> Obj:
    trainer: Obj = jt["spec"]["workload"]["trainJob"]["trainer"]
    return trainer


def test_env_write_is_a_no_op_when_env_is_empty() -> None:
    jt = job_template("nccl-runtime", ["-N", "8", "bin"])
    assert apply_env_to_job_template(jt, [mpi_runtime()], []) == jt


def test_env_write_without_a_train_job_workload_creates_nothing() -> None:
    jt: Obj = {"spec": {"workload": {}}}
    assert apply_env_to_job_template(jt, [torch_runtime()], ENV) == {"spec": {"workload": {}}}


def test_env_write_without_a_trainer_creates_nothing() -> None:
    jt = job_template("train-runtime")
    del jt["spec"]["workload"]["trainJob"]["trainer"]
    before = copy.deepcopy(jt)
    assert apply_env_to_job_template(jt, [torch_runtime()], ENV) == before


def test_env_write_gives_mpi_entries_x_pairs_in_trainer_args() -> None:
    jt = job_template("nccl-runtime", ["-N", "8", "-x", "NCCL_DEBUG=INFO", "/bin/perf", "-b", "8"])
    out = _trainer(apply_env_to_job_template(jt, [mpi_runtime()], ENV))
    assert out["args"] == [
        "-N",
        "8",
        "-x",
        "NCCL_DEBUG=INFO",
        "-x",
        "NCCL_NVLS_ENABLE=0",
        "/bin/perf",
        "-b",
        "8",
    ]
    assert "env" not in out


def test_env_write_replaces_an_mpi_x_pair_of_the_same_name_in_place() -> None:
    jt = job_template("nccl-runtime", ["-x", "NCCL_NVLS_ENABLE=1", "/bin/perf"])
    out = _trainer(apply_env_to_job_template(jt, [mpi_runtime()], ENV))
    assert out["args"] == ["-x", "NCCL_NVLS_ENABLE=0", "/bin/perf"]


def test_env_write_gives_every_other_entry_a_trainer_env_var_upserted_by_name() -> None:
    jt = job_template("train-runtime", ["-x", "A=1"])
    _trainer(jt)["env"] = [
        {"name": "KEEP", "value": "k"},
        {"name": "NCCL_NVLS_ENABLE", "value": "1"},
    ]
    out = _trainer(apply_env_to_job_template(jt, [torch_runtime()], ENV))
    assert out["env"] == [
        {"name": "KEEP", "value": "k"},
        {"name": "NCCL_NVLS_ENABLE", "value": "0"},
    ]
    assert out["args"] == ["-x", "A=1"]


def test_env_write_needs_no_dependency_rewrite() -> None:
    deps = [torch_runtime()]
    before = copy.deepcopy(deps)
    apply_env_to_job_template(job_template("train-runtime"), deps, ENV)
    assert deps == before


def test_env_write_reads_the_shape_from_ml_policy_not_from_x_pairs_in_args() -> None:
    # An MPI arm with no -x pair at all still gets -x pairs, ahead of its program.
    out = _trainer(
        apply_env_to_job_template(job_template("nccl-runtime", ["/bin/perf"]), [mpi_runtime()], ENV)
    )
    assert out["args"] == ["-x", "NCCL_NVLS_ENABLE=0", "/bin/perf"]
    assert "env" not in out


def test_env_write_refuses_to_guess_when_the_runtime_is_not_a_dependency() -> None:
    with pytest.raises(PlatformError, match="not among the dependencies"):
        apply_env_to_job_template(job_template("elsewhere"), [torch_runtime()], ENV)
