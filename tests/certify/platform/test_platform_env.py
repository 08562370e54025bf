"""NCCL base env, MergeEnvVars and MPIEnvArgs."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from glimmer.certify.platform import base_nccl_env_vars, merge_env_vars, mpi_env_args


def _names(env: list[dict[str, Any]]) -> list[str]:
    return [v["name"] for v in env]


def test_base_nccl_env_leaves_nccl_nvls_enable_to_nccls_own_default() -> None:
    for mnnvl in (True, False):
        assert "NCCL_NVLS_ENABLE" not in _names(base_nccl_env_vars(mnnvl))


def test_base_nccl_env_is_model_independent_and_sets_mnnvl_from_the_flag() -> None:
    on, off = base_nccl_env_vars(True), base_nccl_env_vars(False)
    assert _names(on) == [
        "NCCL_DEBUG",
        "NCCL_CUMEM_ENABLE",
        "NCCL_NET_GDR_C2C",
        "NCCL_NET_GDR_LEVEL",
        "NCCL_P2P_NET_CHUNKSIZE",
        "NCCL_SHM_DISABLE",
        "NCCL_MNNVL_ENABLE",
        "NCCL_SOCKET_IFNAME",
    ]
    assert {"name": "NCCL_MNNVL_ENABLE", "value": "1"} in on
    assert {"name": "NCCL_MNNVL_ENABLE", "value": "0"} in off


def test_base_nccl_env_has_no_platform_specific_variables() -> None:
    platform_prefixes = ("NCCL_IB_", "NCCL_FASTRAK", "NCCL_NET_PLUGIN", "FI_", "UCX_")
    for name in _names(base_nccl_env_vars(True)):
        assert not name.startswith(platform_prefixes), name


def test_merge_env_vars_user_values_take_precedence_by_name() -> None:
    base = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    user = [{"name": "B", "value": "user"}, {"name": "C", "value": "3"}]
    assert merge_env_vars(base, user) == [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "user"},
        {"name": "C", "value": "3"},
    ]


def test_merge_env_vars_without_user_env_returns_base_unchanged() -> None:
    base = [{"name": "A", "value": "1"}]
    assert merge_env_vars(base, []) == base


_env = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from("ABCDE"), "value": st.text(max_size=3)}),
    max_size=6,
)


@given(_env, _env)
def test_merge_env_vars_keeps_base_order_then_user_order_and_every_user_entry(
    base: list[dict[str, Any]], user: list[dict[str, Any]]
) -> None:
    merged = merge_env_vars(base, user)
    if not user:
        assert merged == base
        return
    taken = {v["name"] for v in user}
    assert merged == [v for v in base if v["name"] not in taken] + user


def test_mpi_env_args_forwards_env_to_ranks_as_x_pairs() -> None:
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "x y"}]
    assert mpi_env_args(env, []) == ["-x", "A=1", "-x", "B=x y"]


def test_mpi_env_args_skips_names_mpi_args_already_forwards() -> None:
    env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}]
    mpi_args = ["-x", "A=platform", "--mca", "x", "-x", "B"]
    assert mpi_env_args(env, mpi_args) == ["-x", "C=3"]


def test_mpi_env_args_forwards_a_value_from_variable_by_name_only() -> None:
    env = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
    assert mpi_env_args(env, []) == ["-x", "TOKEN"]


def test_mpi_env_args_ignores_a_dangling_x_in_the_last_position() -> None:
    assert mpi_env_args([{"name": "A", "value": "1"}], ["-x"]) == ["-x", "A=1"]


_args = st.lists(
    st.one_of(st.just("-x"), st.sampled_from(["A=1", "B", "C=2", "--mca", "bin"])), max_size=8
)


@given(_env, _args)
def test_mpi_env_args_forward_every_name_exactly_once_together_with_mpi_args(
    env: list[dict[str, Any]], mpi_args: list[str]
) -> None:
    from glimmer.certify.platform.env import forwarded_names

    extra = mpi_env_args(env, mpi_args)
    assert forwarded_names(mpi_args + extra) >= {v["name"] for v in env}
    added = [extra[i + 1].split("=", 1)[0] for i in range(0, len(extra), 2)]
    assert not set(added) & forwarded_names(mpi_args)
