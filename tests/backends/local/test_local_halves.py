"""This host's half of a link or a collective on the local substrate: the rendezvous variables
and the role or rank an execution of a half is given, the deliveries a half makes (none from a
server or a rank; a client's name the link), and the logs kept of deleted executions."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from local_world import runner_command

from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.local.backend import LocalBackend
from glimmer.backends.local.halves import HalfBackend, half_spec, records_only
from glimmer.contract.vocab import Phase, Scope
from glimmer.engine.backend import Delivery, Execution, ExecutionSpec
from glimmer.plan.halves import GroupHalf, Halved, PairHalf

UID = "uid-run"
HALVED = Halved({}, {}, {"link": Scope.PAIR, "ring": Scope.GROUP})


def _spec(test: str = "link", name: str = "x-a1", **env: str) -> ExecutionSpec:
    return ExecutionSpec(
        name=name,
        namespace="default",
        run="run",
        run_uid=UID,
        test=test,
        test_index=0,
        kind="tcp-baseline",
        scope="Node",
        node="here",
        unit_nodes=("here",),
        attempt=1,
        role="",
        rank=None,
        nranks=None,
        image="local",
        env=(("BURNIN_ATTEMPT", "1"), *env.items()),
        duration_seconds=5,
        deadline_seconds=125,
        labels={},
        test_spec=BurnInTestSpec.model_validate({"kind": "tcp-baseline"}),
    )


def test_a_pair_client_gets_its_role_the_servers_address_and_the_peers_name() -> None:
    spec = half_spec(_spec(), Scope.PAIR, PairHalf("client", "10.1.0.1", "host-a"))
    env = dict(spec.env)
    assert env["BURNIN_ROLE"] == "client"
    assert env["BURNIN_PEER_HOST"] == "10.1.0.1"
    assert env["BURNIN_PEER_NODE"] == "host-a"
    assert (spec.scope, spec.role, spec.rank) == ("Pair", "client", None)


def test_a_pair_server_gets_no_peer_address_rather_than_an_empty_one() -> None:
    spec = half_spec(_spec(), Scope.PAIR, PairHalf("server", None, "host-b"))
    env = dict(spec.env)
    assert env["BURNIN_ROLE"] == "server" and "BURNIN_PEER_HOST" not in env


def test_a_rank_gets_rank_count_and_root_and_runs_as_its_rank() -> None:
    spec = half_spec(_spec("ring"), Scope.GROUP, GroupHalf(2, 3, "10.1.2.1", "10.1.2.1"))
    env = dict(spec.env)
    assert (env["BURNIN_RANK"], env["BURNIN_NRANKS"], env["BURNIN_ROOT_HOST"]) == (
        "2",
        "3",
        "10.1.2.1",
    )
    assert "BURNIN_ROLE" not in env  # a rank is not an end of a link
    assert (spec.scope, spec.role, spec.rank, spec.nranks) == ("Group", "rank-2", 2, 3)


def test_the_flags_win_over_a_tests_own_rendezvous_variables() -> None:
    spec = _spec(BURNIN_ROLE="server", BURNIN_PEER_HOST="old", KEEP="1")
    made = half_spec(spec, Scope.PAIR, PairHalf("client", "10.1.0.1", "a"))
    assert [v for k, v in made.env if k == "BURNIN_ROLE"] == ["client"]
    assert [v for k, v in made.env if k == "BURNIN_PEER_HOST"] == ["10.1.0.1"]
    assert dict(made.env)["KEEP"] == "1"


def test_a_half_without_its_flags_runs_with_the_variables_unset() -> None:
    spec = _spec(BURNIN_ROLE="server")
    made = half_spec(spec, Scope.PAIR, None)
    assert "BURNIN_ROLE" not in dict(made.env) and made.scope == "Pair"
    # a rank's flags say nothing about a link
    other = half_spec(_spec(), Scope.PAIR, GroupHalf(0, 2, None, "here"))
    assert not {"BURNIN_ROLE", "BURNIN_RANK"} & set(dict(other.env))


def test_only_a_server_or_a_rank_delivers_nothing() -> None:
    assert records_only(PairHalf("server", None, "b"))
    assert records_only(GroupHalf(1, 2, "x", "x"))
    assert not records_only(PairHalf("client", "x", "a"))
    assert not records_only(None)


class _Inner:
    """Stands in for the wrapped LocalBackend where only what was asked of it matters."""

    def __init__(self, log: str = "") -> None:
        self.delivered: list[Delivery] = []
        self.deleted: list[str] = []
        self.log = log

    def deliver(self, delivery: Delivery) -> bool:
        self.delivered.append(delivery)
        return True

    def read_log(self, namespace: str, name: str) -> str:
        return self.log

    def delete_execution(self, namespace: str, name: str) -> None:
        self.deleted.append(name)


def _run() -> BurnInRun:
    result = TestResult(name="link", kind="tcp-baseline", scope=Scope.NODE, phase=Phase.PASSED,
                        nodes=["b"])  # fmt: skip
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "run", "uid": UID},
            "spec": {"profileRef": "p", "target": {"nodeNames": ["b"]}},
            "status": {"phase": "Passed", "results": [result.model_dump()]},
        }
    )


def _delivery(reason: str = "TestCompleted") -> Delivery:
    run = _run()
    result = (run.status.results or [])[0] if run.status else None
    return Delivery(reason, "default", "run", UID, "link/b", "Passed", result=result, view=run)


def _wrapped(inner: Any, half: Any, raw: Path | None = None) -> HalfBackend:
    return HalfBackend(inner, HALVED, half, raw_dir=raw)


def test_a_server_and_a_rank_hand_nothing_to_the_sinks_and_say_it_is_done() -> None:
    for half in (PairHalf("server", None, "b"), GroupHalf(0, 2, None, "r0")):
        inner = _Inner()
        assert _wrapped(inner, half).deliver(_delivery()) is True
        assert inner.delivered == []


def test_a_clients_envelopes_name_the_link_server_first() -> None:
    inner = _Inner()
    _wrapped(inner, PairHalf("client", "10.1.0.1", "a")).deliver(_delivery())
    [sent] = inner.delivered
    assert sent.key == "link/a+b"
    assert sent.result is not None and sent.result.nodes == ["a", "b"]
    assert sent.view is not None and sent.view.status is not None
    assert (sent.view.status.results or [])[0].nodes == ["a", "b"]
    phase = dataclasses.replace(_delivery("RunPhaseChanged"), key="Passed", result=None)
    _wrapped(inner, PairHalf("client", "10.1.0.1", "a")).deliver(phase)
    assert inner.delivered[-1].key == "Passed"  # a phase change keeps its key


def test_a_deleted_executions_log_is_kept_in_the_raw_folder_first(tmp_path: Path) -> None:
    inner = _Inner(log="tcpRetransmits=0\nTCP_BASELINE_PASS\n")
    _wrapped(inner, None, tmp_path / "raw").delete_execution("default", "x-a1")
    assert (tmp_path / "raw" / "x-a1.log").read_text() == inner.log
    assert inner.deleted == ["x-a1"]


def _until_done(backend: HalfBackend, name: str) -> Execution:
    until = time.monotonic() + 20
    while True:
        found: Execution | None = backend.executions("default", "run", UID).get(name)
        if found is not None and not found.live:
            return found
        assert time.monotonic() < until, f"{name} is {found}"
        time.sleep(0.05)


def test_a_real_runner_process_of_a_half_sees_the_rendezvous_and_its_record_the_role(
    tmp_path: Path,
) -> None:
    inner = LocalBackend(tmp_path / "state", "here", runner_command=runner_command(tmp_path))
    backend = _wrapped(inner, PairHalf("client", "10.1.0.1", "a"))
    names = "BURNIN_ROLE,BURNIN_PEER_HOST,BURNIN_PEER_NODE"
    backend.create_execution(_spec(FAKE_PRINT_ENV=names))
    done = _until_done(backend, "x-a1")
    log = backend.read_log("default", "x-a1")
    assert "env.BURNIN_ROLE=client" in log and "env.BURNIN_PEER_HOST=10.1.0.1" in log
    assert "env.BURNIN_PEER_NODE=a" in log
    assert (done.spec.role, done.spec.scope) == ("client", "Pair")
