"""The runner environment and time budget of §2.16."""

from __future__ import annotations

from typing import Any

from plan_builders import spec

from glimmer.plan.env import (
    active_deadline_seconds,
    effective_env,
    execution_duration,
    group_place,
    pair_place,
    pod_window_seconds,
    runner_env,
)


def _names(env: list[Any]) -> list[str]:
    return [v.name for v in env]


def test_node_env_is_duration_then_attempt() -> None:
    env = runner_env(spec(durationSeconds=45), 2)
    assert [(v.name, v.value) for v in env] == [
        ("BURNIN_DURATION_SECONDS", "45"),
        ("BURNIN_ATTEMPT", "2"),
    ]


def test_resource_limits_are_sorted_canonical_and_omitted_without_limits() -> None:
    limited = spec(resources={"limits": {"nvidia.com/gpu": 8, "memory": "1024Mi", "cpu": "1500m"}})
    env = runner_env(limited, 1)
    assert env[2].name == "BURNIN_RESOURCE_LIMITS"
    assert env[2].value == "cpu=1500m,memory=1Gi,nvidia.com/gpu=8"
    requests_only = spec(resources={"requests": {"cpu": "1"}})
    assert "BURNIN_RESOURCE_LIMITS" not in _names(runner_env(requests_only, 1))


def test_variant_axes_are_sorted_and_upper_cased_with_values_verbatim() -> None:
    env = runner_env(spec(), 1, {"size": "8G", "Precision": "fp8", "algo": "Ring"})
    assert [(v.name, v.value) for v in env[2:]] == [
        ("BURNIN_VARIANT_PRECISION", "fp8"),
        ("BURNIN_VARIANT_ALGO", "Ring"),
        ("BURNIN_VARIANT_SIZE", "8G"),
    ]


def test_pair_env_names_role_peer_host_and_peer_node() -> None:
    server = runner_env(
        spec("ib-write-bw", scope="Pair"), 1, None, pair_place("server", "n2", "bp-svc", "lab")
    )
    assert [(v.name, v.value) for v in server[2:]] == [
        ("BURNIN_ROLE", "server"),
        ("BURNIN_PEER_HOST", "client.bp-svc"),  # the substrate's address replaces it
        ("BURNIN_PEER_NODE", "n2"),
    ]
    client = runner_env(
        spec("ib-write-bw", scope="Pair"), 1, None, pair_place("client", "n1", "bp-svc", "lab")
    )
    assert client[3].value == "server.bp-svc"


def test_group_env_names_rank_and_root_and_no_role() -> None:
    place = group_place(2, 4, "n1", "bp-svc", "lab")
    env = runner_env(spec("nccl", scope="Group"), 1, None, place)
    assert [(v.name, v.value) for v in env[2:]] == [
        ("BURNIN_RANK", "2"),
        ("BURNIN_NRANKS", "4"),
        ("BURNIN_ROOT_HOST", "rank-0.bp-svc"),
        ("BURNIN_ROOT_NODE", "n1"),
    ]
    assert "BURNIN_ROLE" not in _names(env)


def test_runner_env_comes_last_and_overrides_what_came_before() -> None:
    own = spec(
        runner={
            "env": [
                {"name": "BURNIN_DURATION_SECONDS", "value": "5"},
                {"name": "FROM", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            ]
        },
        durationSeconds=60,
    )
    env = runner_env(own, 1, {"a": "b"})
    assert _names(env)[-2:] == ["BURNIN_DURATION_SECONDS", "FROM"]
    seen = effective_env(env)
    assert seen["BURNIN_DURATION_SECONDS"].value == "5"
    assert seen["FROM"].value_from == {"fieldRef": {"fieldPath": "spec.nodeName"}}


def test_execution_duration_is_the_segment_then_the_duration_then_600() -> None:
    assert execution_duration(spec()) == 600
    assert execution_duration(spec(durationSeconds=90)) == 90
    soak = spec("thermal-soak", durationSeconds=3600, soak={"segmentSeconds": 900})
    assert execution_duration(soak) == 900
    assert runner_env(soak, 1)[0].value == "900"


def test_active_deadline_adds_120_and_300_more_at_group() -> None:
    assert active_deadline_seconds(spec(durationSeconds=60)) == 180
    assert active_deadline_seconds(spec("ib-write-bw", scope="Pair", durationSeconds=60)) == 180
    assert active_deadline_seconds(spec("nccl", scope="Group", durationSeconds=60)) == 480
    soak = spec("thermal-soak", durationSeconds=3600, soak={"segmentSeconds": 900})
    assert active_deadline_seconds(soak) == 1020


def test_pod_window_is_deadline_plus_scheduling_grace() -> None:
    assert pod_window_seconds(spec(durationSeconds=60)) == 60 + 120 + 300
