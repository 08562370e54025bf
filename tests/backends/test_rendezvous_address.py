"""The substrate answers the peer / root address of a rendezvous; the engine puts the answer in
BURNIN_PEER_HOST / BURNIN_ROOT_HOST (engine/podspec.addressed), and a test's own value wins."""

from __future__ import annotations

from typing import Any

from engine_world import ScriptedRunner, run_object, spec_of, world

from glimmer.backends.sim.backend import SimBackend
from glimmer.engine.backend import ExecutionSpec
from glimmer.engine.podspec import addressed

PAIR = spec_of("ib-write-bw", scope="Pair")
GROUP = spec_of("nccl", scope="Group")


class Elsewhere(SimBackend):
    """A substrate whose addresses look nothing like the twin's."""

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str:
        return f"{role}@{rendezvous}.{namespace}.example"


def _specs(test: Any, targets: list[str], default: str) -> tuple[SimBackend, list[ExecutionSpec]]:
    w = world(len(targets), {"t": test}, [{"testRef": "t"}], runner=ScriptedRunner(default))
    w.submit(run_object(targets=targets, maxConcurrentNodes=len(targets)))
    w.drive()
    uid = w.run().metadata.uid
    return w.backend, [e.spec for e in w.backend.executions("default", "run", uid)]


def test_the_simulator_answers_a_role_by_its_name_within_the_rendezvous() -> None:
    backend, specs = _specs(PAIR, ["node-000", "node-001"], "bandwidthGbps=390")
    assert backend.rendezvous_address("lab", "bp-x", "client") == "client.bp-x"
    server = next(s for s in specs if s.role == "server")
    assert server.env_value("BURNIN_PEER_HOST") == f"client.{server.service}"


def test_the_engine_puts_the_substrates_answer_for_the_peer_in_the_pair_environment() -> None:
    backend, specs = _specs(PAIR, ["node-000", "node-001"], "bandwidthGbps=390")
    other = Elsewhere(list(backend.nodes.values()))
    for spec in specs:
        peer = "client" if spec.role == "server" else "server"
        out = addressed(spec, other)
        assert out.env_value("BURNIN_PEER_HOST") == f"{peer}@{spec.service}.default.example"
        assert [k for k, _ in out.env] == [k for k, _ in spec.env]  # same order, same names
        assert out.env_value("BURNIN_PEER_NODE") == spec.env_value("BURNIN_PEER_NODE")


def test_the_engine_puts_rank_zeros_address_in_every_ranks_root_host() -> None:
    backend, specs = _specs(GROUP, ["node-000", "node-001", "node-002"], "busBandwidthGBs=400")
    other = Elsewhere(list(backend.nodes.values()))
    assert len(specs) == 3
    for spec in specs:
        out = addressed(spec, other)
        assert out.env_value("BURNIN_ROOT_HOST") == f"rank-0@{spec.service}.default.example"
        assert out.env_value("BURNIN_PEER_HOST") is None


def test_a_node_execution_asks_the_substrate_for_no_address() -> None:
    backend, (spec,) = _specs(spec_of("gpu-burn"), ["node-000"], "miscompares=0")
    assert spec.seat is None
    assert addressed(spec, Elsewhere(list(backend.nodes.values()))) is spec


def test_a_peer_host_the_test_sets_itself_is_kept() -> None:
    own = spec_of(
        "ib-write-bw", scope="Pair", runner={"env": [{"name": "BURNIN_PEER_HOST", "value": "ib0"}]}
    )
    backend, specs = _specs(own, ["node-000", "node-001"], "bandwidthGbps=390")
    for spec in specs:
        assert spec.seat is not None and spec.seat.address_env == ""
        out = addressed(spec, Elsewhere(list(backend.nodes.values())))
        assert out.env_value("BURNIN_PEER_HOST") == "ib0"
