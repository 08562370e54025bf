"""The execution is built in one place (§2.16): names, labels, environment order, deadlines."""

from __future__ import annotations

from engine_world import ScriptedRunner, run_object, spec_of, world

from glimmer.engine.keys import ATTEMPT_LABEL, NODE_LABEL, PAIR_ROLE_LABEL, RUN_LABEL, TEST_LABEL
from glimmer.engine.names import execution_name, service_name


def test_names_are_deterministic_and_bounded() -> None:
    a = execution_name("r" * 60, "uid-1", 2, "node-a", 3)
    assert a == execution_name("r" * 60, "uid-1", 2, "node-a", 3)
    assert a.startswith("r" * 36 + "-t2-a3-") and len(a) == 36 + len("-t2-a3-") + 8
    assert execution_name("run", "uid-1", 0, "n", 1, "server").startswith("run-t0-a1-server-")
    assert execution_name("run", "uid-1", 0, "n", 1) != execution_name("run", "uid-2", 0, "n", 1)
    assert service_name("run", "uid-1", 0, 1, "Pair").startswith("bp-run-t0-a1-")


def test_environment_in_order_with_runner_env_winning() -> None:
    spec = spec_of(
        "ib-write-bw",
        scope="Pair",
        resources={"limits": {"nvidia.com/gpu": 8, "memory": "16Gi"}},
        runner={
            "env": [{"name": "BURNIN_ATTEMPT", "value": "99"}, {"name": "EXTRA", "value": "x"}]
        },
    )
    entry = {"testRef": "p", "variants": [{"name": "wide", "axes": {"msgsize": "4m"}}]}
    w = world(2, {"p": spec}, [entry], runner=ScriptedRunner(default="bandwidthGbps=390"))
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    w.drive()
    server = next(c.spec for c in w.runner.calls if c.spec.role == "server")
    names = [name for name, _ in server.env]
    assert names == [
        "BURNIN_DURATION_SECONDS",
        "BURNIN_ATTEMPT",
        "BURNIN_RESOURCE_LIMITS",
        "BURNIN_VARIANT_MSGSIZE",
        "BURNIN_ROLE",
        "BURNIN_PEER_HOST",
        "BURNIN_PEER_NODE",
        "EXTRA",
    ]
    assert server.env_value("BURNIN_ATTEMPT") == "99"  # the later duplicate wins
    assert server.env_value("BURNIN_RESOURCE_LIMITS") == "memory=16Gi,nvidia.com/gpu=8"
    assert server.deadline_seconds == 600 + 120
    assert server.labels[RUN_LABEL] == "run" and server.labels[TEST_LABEL] == "p-wide"
    assert server.labels[NODE_LABEL] == "node-000" and server.labels[ATTEMPT_LABEL] == "1"
    assert server.labels[PAIR_ROLE_LABEL] == "server"
    assert server.seat is not None and server.seat.rendezvous == server.service
    assert (server.seat.peer_role, server.seat.address_env) == ("client", "BURNIN_PEER_HOST")
