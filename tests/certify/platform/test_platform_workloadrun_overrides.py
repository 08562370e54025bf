"""BuildOverrides: the WorkloadRun platform overrides (specs/certify.md §4.8, §9.2 scenario 15)."""

from __future__ import annotations

from typing import Any

from glimmer.certify.platform.walk import get_path
from glimmer.certify.platform.when import MatchContext, matches_when
from glimmer.certify.platform.workloadrun_overrides import (
    OverrideConfig,
    WorkloadRunOverride,
    build_overrides,
)

Obj = dict[str, Any]


def _matching(cfg: OverrideConfig, platform: str, arch: str) -> list[WorkloadRunOverride]:
    ctx = MatchContext(platform, arch)
    return [o for o in build_overrides(cfg) if matches_when(o.spec.get("when"), ctx)]


def test_mpi_on_aws_gets_its_mpi_args_and_pre_command() -> None:
    cfg = OverrideConfig("run", gpus_per_node=4, enable_mnnvl=True, framework_type="mpi")
    found = _matching(cfg, "aws", "gb200")
    assert ["-x", "NCCL_NET_PLUGIN=none"] in [o.mpi_args for o in found]
    assert any("rm -rf /opt/amazon" in o.pre_command for o in found)
    kinds = {d["kind"] for o in found for d in o.spec.get("dependencies") or []}
    assert kinds == {"ComputeDomain", "TrainingRuntime"}


def test_torch_without_mnnvl_on_gcp_h100_gets_trainer_env_and_no_mpi_args() -> None:
    cfg = OverrideConfig("run", gpus_per_node=8, framework_type="torch")
    found = _matching(cfg, "gcp", "h100")
    assert all(not o.mpi_args for o in found)
    env = [
        v["name"]
        for o in found
        for v in get_path(o.spec, "jobTemplate", "spec", "workload", "trainJob", "trainer", "env")
        or []
    ]
    assert "NCCL_FASTRAK_CTRL_DEV" in env


def test_exec_single_node_on_prem_gets_nothing() -> None:
    assert _matching(OverrideConfig("run", framework_type="exec"), "onprem", "h100") == []


def test_a_nic_request_needs_nics_mlnx_zero_opts_out() -> None:
    without = _matching(OverrideConfig("run", mlnx_per_node=0), "azure", "h100")
    with_nics = _matching(OverrideConfig("run", mlnx_per_node=8), "azure", "h100")
    assert "mlnxnics" not in str(without) and '"8"' not in str(without)
    assert "nvidia.com/mlnxnics" in str(with_nics)


def test_user_env_wins_in_runtime_env_and_x_pairs_and_is_not_copied_in() -> None:
    user = [{"name": "NCCL_IB_HCA", "value": "mlx5_0"}, {"name": "ONLY_MINE", "value": "1"}]
    cfg = OverrideConfig("run", framework_type="mpi", user_env=user)
    found = _matching(cfg, "togetherai", "h100")
    mpi_args = [a for o in found for a in o.mpi_args]
    assert "NCCL_IB_HCA=mlx5_0" in mpi_args and "NCCL_NVLS_ENABLE=1" in mpi_args
    assert not any(a.startswith("ONLY_MINE") for a in mpi_args)
    text = str([o.spec for o in found])
    assert "'mlx5_0'" in text and "ONLY_MINE" not in text


def test_user_env_wins_in_trainer_env_of_job_template_patches() -> None:
    user = [{"name": "NCCL_FASTRAK_NUM_FLOWS", "value": "4"}]
    cfg = OverrideConfig("run", framework_type="torch", user_env=user)
    (patch,) = [o for o in _matching(cfg, "gcp", "h100") if o.spec.get("jobTemplate")]
    env = patch.spec["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["env"]
    assert {"name": "NCCL_FASTRAK_NUM_FLOWS", "value": "4"} in env
