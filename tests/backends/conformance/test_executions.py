"""Executions (engine/backend.py, ``Executions``): idempotent create, ownership by run name
AND uid, deleting a missing one is no error, unreadable logs raise LogUnavailable, the
rendezvous address is pure, and an Execution once handed out never changes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from substrates import NAMESPACE, Substrate, World, execution_spec

from glimmer.engine.backend import Backend, ExecPhase, LogUnavailable, Rendezvous


def _names(backend: Backend, run: str = "run", uid: str = "uid-run") -> list[str]:
    return sorted(e.name for e in backend.executions(NAMESPACE, run, uid))


def test_creating_an_execution_of_an_existing_name_keeps_the_first_and_makes_no_second(
    backend: Backend,
) -> None:
    first = execution_spec("run-burn-node-000-a1", "node-000")
    backend.create_execution(first)
    again = dataclasses.replace(first, image="ghcr.io/glimmer/runner:other", node="node-001")
    backend.create_execution(again)
    assert _names(backend) == ["run-burn-node-000-a1"]
    found = backend.executions(NAMESPACE, "run", "uid-run").get("run-burn-node-000-a1")
    assert found is not None and found.spec == first
    assert [e.name for e in backend.executions(NAMESPACE, "run", "uid-run").live()] == [
        "run-burn-node-000-a1"
    ]


def test_executions_are_matched_by_run_name_and_uid(backend: Backend) -> None:
    backend.create_execution(execution_spec("mine", "node-000"))
    # A run of the same name recreated (a new uid) owns nothing of the old one's.
    backend.create_execution(execution_spec("old", "node-001", run_uid="uid-old"))
    backend.create_execution(execution_spec("other", "node-002", run="other", run_uid="uid-o"))
    assert _names(backend) == ["mine"]
    assert _names(backend, "run", "uid-old") == ["old"]
    assert _names(backend, "other", "uid-o") == ["other"]
    assert _names(backend, "run", "uid-none") == []


def test_a_deleted_execution_is_gone_and_deleting_a_missing_one_is_not_an_error(
    backend: Backend,
) -> None:
    backend.create_execution(execution_spec("gone", "node-000"))
    backend.delete_execution(NAMESPACE, "gone")
    assert _names(backend) == []
    backend.delete_execution(NAMESPACE, "gone")  # already deleted
    backend.delete_execution(NAMESPACE, "never-created")
    assert _names(backend) == []


def test_read_log_of_an_unknown_execution_raises_log_unavailable(backend: Backend) -> None:
    with pytest.raises(LogUnavailable):
        backend.read_log(NAMESPACE, "never-created")
    backend.create_execution(execution_spec("gone", "node-000"))
    backend.delete_execution(NAMESPACE, "gone")
    with pytest.raises(LogUnavailable):
        backend.read_log(NAMESPACE, "gone")


def test_an_execution_runs_to_its_end_and_its_log_can_be_read(
    substrate: Substrate, backend: Backend
) -> None:
    backend.create_execution(execution_spec("runs", "node-000", duration=60))
    substrate.let_time_pass(backend, 3600)
    found = backend.executions(NAMESPACE, "run", "uid-run").get("runs")
    assert found is not None and found.phase is ExecPhase.SUCCEEDED and found.exit_code == 0
    assert found.started and found.finished_at is not None
    assert isinstance(backend.read_log(NAMESPACE, "runs"), str)
    assert backend.executions(NAMESPACE, "run", "uid-run").live() == []


def test_an_execution_handed_out_is_not_changed_as_it_runs(
    substrate: Substrate, backend: Backend
) -> None:
    backend.create_execution(execution_spec("runs", "node-000", duration=60))
    table = backend.executions(NAMESPACE, "run", "uid-run")
    before = table.get("runs")
    assert before is not None and before.phase is ExecPhase.PENDING
    snapshot = dataclasses.asdict(before)
    substrate.let_time_pass(backend, 3600)
    after = backend.executions(NAMESPACE, "run", "uid-run").get("runs")
    assert after is not None and after.phase is ExecPhase.SUCCEEDED
    assert dataclasses.asdict(before) == snapshot


def test_the_rendezvous_address_is_deterministic_differs_by_role_and_needs_no_rendezvous(
    substrate: Substrate, backend: Backend, tmp_path: Path, world: World
) -> None:
    # Pure: asked before any rendezvous exists, and the same from a second instance.
    server = backend.rendezvous_address(NAMESPACE, "run-bw-a1", "server")
    assert server == backend.rendezvous_address(NAMESPACE, "run-bw-a1", "server")
    second = substrate.make(tmp_path / "second", world)
    assert second.rendezvous_address(NAMESPACE, "run-bw-a1", "server") == server
    assert server != backend.rendezvous_address(NAMESPACE, "run-bw-a1", "client")
    assert server != backend.rendezvous_address(NAMESPACE, "run-bw-a2", "server")
    assert backend.rendezvous_address(NAMESPACE, "run-nccl-a1", "rank-0") != (
        backend.rendezvous_address(NAMESPACE, "run-nccl-a1", "rank-1")
    )
    backend.ensure_rendezvous(Rendezvous("run-bw-a1", NAMESPACE, "run", "uid-run", "bw", 1))
    backend.ensure_rendezvous(Rendezvous("run-bw-a1", NAMESPACE, "run", "uid-run", "bw", 1))
    assert backend.rendezvous_address(NAMESPACE, "run-bw-a1", "server") == server
    assert server and isinstance(server, str)
