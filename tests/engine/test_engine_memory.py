"""What an engine remembers between its passes lives on the engine, is keyed by the run and the
resourceVersion it wrote, and is forgotten with the run (terminal, deleted, gone)."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import timedelta
from enum import Enum
from types import FunctionType, ModuleType
from typing import Any

import pytest
from engine_world import nodes, profile, run_object, spec_of, world

import glimmer.engine
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.backends.sim.backend import SimBackend, SimExecutions
from glimmer.backends.sim.driver import drive
from glimmer.contract.vocab import Phase
from glimmer.engine import book, node_unit
from glimmer.engine.backend import Execution
from glimmer.engine.memory import Memory
from glimmer.engine.reconciler import Engine

QUICK = {"burn": spec_of(durationSeconds=60)}
ONE_TEST = [{"testRef": "burn"}]


def _engine_modules() -> list[ModuleType]:
    return [
        importlib.import_module(f"glimmer.engine.{info.name}")
        for info in pkgutil.iter_modules(glimmer.engine.__path__)
    ]


_IMMUTABLE = (str, bytes, int, float, bool, type(None), timedelta, Enum)


def _frozen(value: object) -> bool:
    """A value no holder can change: scalars, enum members, and tuples or frozensets of them."""
    if isinstance(value, _IMMUTABLE):
        return True
    if isinstance(value, tuple | frozenset):
        return all(_frozen(v) for v in value)
    return False


def _mutable_globals(module: ModuleType) -> list[str]:
    found = []
    for name, value in vars(module).items():
        if name.startswith("__") or isinstance(value, ModuleType | type):
            continue
        if hasattr(value, "cache_info") or hasattr(value, "cache_clear"):
            found.append(f"{name} (a cache)")
        elif isinstance(value, FunctionType) or (callable(value) and not _frozen(value)):
            continue  # functions, and typing constructs
        elif type(value).__module__ in ("__future__", "datetime", "typing", "types"):
            continue  # `annotations`, timezone.utc, type aliases
        elif not _frozen(value):
            found.append(f"{name} ({type(value).__name__})")
    return found


def test_no_engine_module_holds_mutable_state_or_a_cache_at_module_level() -> None:
    found = {m.__name__: _mutable_globals(m) for m in _engine_modules()}
    assert {k: v for k, v in found.items() if v} == {}
    assert len(found) > 20  # every module was looked at


def test_the_scan_finds_a_module_level_dict_list_set_and_cache() -> None:
    planted = ModuleType("planted")
    planted.__dict__.update(
        _INFO={}, ORDER=[], SEEN={1}, TERMINAL=frozenset({"a"}), NAMES=("a", "b")
    )
    planted.__dict__["cached"] = importlib.import_module("functools").lru_cache(lambda x: x)
    assert sorted(_mutable_globals(planted)) == [
        "ORDER (list)",
        "SEEN (set)",
        "_INFO (dict)",
        "cached (a cache)",
    ]


def test_after_a_thousand_runs_driven_and_deleted_the_engine_remembers_no_run() -> None:
    w = world(2, QUICK, ONE_TEST)
    targets = list(w.backend.nodes)
    for i in range(1000):
        name = f"run-{i:04d}"
        w.submit(run_object(name, targets=targets, maxConcurrentNodes=2))
        final = w.drive(name).run
        assert final.status is not None and final.status.phase is Phase.PASSED
        w.backend.delete_run("default", name)
        assert w.backend.get_run("default", name) is None
    assert len(w.engine.memory) == 0
    assert w.backend.runs == {}


def test_a_running_run_is_remembered_until_it_is_deleted() -> None:
    w = world(2, QUICK, ONE_TEST)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=1))
    w.drive(until=30.0)  # started, not finished
    assert len(w.engine.memory) == 1
    w.backend.delete_run("default", "run")  # the finalizer holds it: being deleted
    w.pass_()
    assert len(w.engine.memory) == 0
    assert w.backend.get_run("default", "run") is None


def test_a_run_gone_from_the_store_is_forgotten_at_its_next_pass() -> None:
    w = world(2, QUICK, ONE_TEST)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=1))
    w.drive(until=30.0)
    w.backend.runs.clear()  # removed behind the engine's back
    assert w.pass_() is None
    assert len(w.engine.memory) == 0


def test_the_memory_keeps_at_most_its_bound_of_runs_dropping_the_oldest() -> None:
    memory = Memory(max_runs=2)
    runs = [run_object(f"r{i}").model_copy(deep=True) for i in range(3)]
    for i, run in enumerate(runs):
        run.metadata.uid = f"uid-{i}"
        memory.of(run)
    assert len(memory) == 2
    assert memory.of(runs[2]).uid == "uid-2"
    assert memory.of(runs[0]).uid == "uid-0"  # made fresh: it had been dropped
    assert len(memory) == 2


def test_a_run_recreated_under_the_same_name_is_not_given_the_old_runs_memory() -> None:
    memory = Memory()
    old, new = run_object().model_copy(deep=True), run_object().model_copy(deep=True)
    old.metadata.uid, new.metadata.uid = "uid-old", "uid-new"
    memory.of(old).audited = True
    assert memory.of(new).audited is False
    assert len(memory) == 1


class Deserialising(SimBackend):
    """A substrate that hands out a new copy of everything it stores on every read, as one that
    deserialises (an API server, a file store) does: object identity never matches."""

    def _copy(self, run: BurnInRun) -> BurnInRun:
        return BurnInRun.model_validate(run.model_dump(by_alias=True, mode="json"))

    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        found = super().get_run(namespace, name)
        return self._copy(found) if found is not None else None

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        return self._copy(super().write_status(run, status))

    def write_metadata(self, run: BurnInRun, **kwargs: Any) -> BurnInRun:
        return self._copy(super().write_metadata(run, **kwargs))

    def executions(self, namespace: str, run: str, run_uid: str) -> Any:
        return _Fresh(super().executions(namespace, run, run_uid))


def _copied(execution: Execution | None) -> Execution | None:
    return None if execution is None else replace(execution, spec=replace(execution.spec))


class _Fresh:
    """A run's executions read afresh: equal copies, never the objects stored."""

    def __init__(self, table: SimExecutions) -> None:
        self.table = table
        self.by_name, self.live_names = table.by_name, table.live_names  # the simulator's own

    def get(self, name: str) -> Execution | None:
        return _copied(self.table.get(name))

    def live(self) -> Sequence[Execution]:
        return [e for e in map(_copied, self.table.live()) if e is not None]

    def __iter__(self) -> Iterator[Execution]:
        return (e for e in map(_copied, self.table) if e is not None)


def _results(backend_cls: type[SimBackend], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, int]:
    builds = []
    build = book.Index.build
    monkeypatch.setattr(
        book.Index, "build", classmethod(lambda cls, r: builds.append(1) or build(r))
    )
    w = world(
        4, {"burn": spec_of(durationSeconds=600, repeatCount=3)}, ONE_TEST, backend_cls=backend_cls
    )
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2))
    d = w.drive()
    assert d.run.status is not None and d.run.status.phase is Phase.PASSED
    return d.run.status.model_dump(), len(builds) * 1000 // d.passes


def test_a_substrate_that_deserialises_every_read_reaches_the_same_status(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain, _ = _results(SimBackend, monkeypatch)
    fresh, _ = _results(Deserialising, monkeypatch)
    assert fresh == plain


def test_the_index_is_reused_when_the_version_it_wrote_is_read_back_as_a_new_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, per_mille = _results(Deserialising, monkeypatch)
    # Most passes read back the status the previous one wrote; only a pass after a write the
    # engine did not make itself (metadata: plan, finalizer) rebuilds the index.
    assert per_mille < 500, per_mille


def test_a_fresh_engine_over_a_deserialising_substrate_carries_on_where_another_stopped() -> None:
    backend = Deserialising(
        nodes(2), profiles={"prof": profile(ONE_TEST)}, tests=dict(QUICK), seed=7
    )
    backend.submit(run_object(targets=list(backend.nodes), maxConcurrentNodes=1))
    first = Engine(backend)
    for _ in range(4):
        first.reconcile("default", "run")
    final = drive(backend, Engine(backend), "default", "run").run
    assert final.status is not None and final.status.phase is Phase.PASSED
    assert final.status.passed == 2


def _quiet_hits(backend_cls: type[SimBackend], monkeypatch: pytest.MonkeyPatch) -> int:
    hits = []
    still = node_unit._still_quiet

    def counted(*args: Any) -> bool:
        found = still(*args)
        hits.extend([1] if found else [])
        return found

    monkeypatch.setattr(node_unit, "_still_quiet", counted)
    w = world(3, QUICK, ONE_TEST, backend_cls=backend_cls)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=3))
    for _ in range(40):  # passes while the executions run, without the clock moving on
        w.pass_()
    return len(hits)


def test_a_quiet_unit_is_not_revisited_on_a_substrate_that_hands_out_copies(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plain = _quiet_hits(SimBackend, monkeypatch)
    fresh = _quiet_hits(Deserialising, monkeypatch)
    assert plain > 0 and fresh == plain
