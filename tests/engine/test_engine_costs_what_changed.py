"""A pass costs what changed (issue 12): the results index is changed in place and reused while
its generation is the one written; units asleep are not visited until their execution, their
result or their wake time says so; a small run reads only its own nodes; and none of it changes
a decision — the same run reaches the same status on a substrate that reports its changes, one
that does not, and a fresh engine."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest
from engine_world import run_object, spec_of, world
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.backends.sim.backend import SimBackend, SimExecutions
from glimmer.contract.vocab import Phase
from glimmer.engine import execute
from glimmer.engine.backend import Execution, NodeView
from glimmer.engine.cordoned import Cordoned
from glimmer.engine.rivals import RunIndex
from glimmer.engine.sleep import Sleepers

QUICK = {"burn": spec_of(durationSeconds=60)}
LONG = {"burn": spec_of(durationSeconds=600, repeatCount=2)}
ONE_TEST = [{"testRef": "burn"}]


class _Plain:
    """A run's executions with no change feed: the engine reads every live one each pass."""

    def __init__(self, table: SimExecutions) -> None:
        self.table = table
        self.by_name, self.live_names = table.by_name, table.live_names  # the simulator's own

    def get(self, name: str) -> Execution | None:
        return self.table.get(name)

    def live(self) -> Sequence[Execution]:
        return self.table.live()

    def __iter__(self) -> Iterator[Execution]:
        return iter(self.table)


class NoFeed(SimBackend):
    """The simulator, less its report of which executions changed."""

    def executions(self, namespace: str, run: str, run_uid: str) -> Any:
        return _Plain(super().executions(namespace, run, run_uid))


class Counting(SimBackend):
    """The simulator, counting whole-fleet node listings."""

    listings = 0

    def list_nodes(self, selector: Any = None) -> list[NodeView]:
        self.listings += 1
        return super().list_nodes(selector)


class FailOnce(SimBackend):
    """The simulator, whose next status write fails once ``fail`` is set."""

    fail = False

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        if self.fail:
            self.fail = False
            raise RuntimeError("the store went away")
        return super().write_status(run, status)


def _visits(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    advance = execute.advance_node  # type: ignore[attr-defined]

    def counted(ctx: Any, index: int, test: Any, node: str) -> bool:
        seen.append(node)
        return advance(ctx, index, test, node)

    monkeypatch.setattr(execute, "advance_node", counted)
    return seen


def _final(backend_cls: type[SimBackend]) -> dict[str, Any]:
    w = world(6, LONG, ONE_TEST, backend_cls=backend_cls)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=3))
    d = w.drive()
    assert d.run.status is not None and d.run.status.phase is Phase.PASSED
    return d.run.status.model_dump()


def test_a_substrate_that_reports_its_changes_reaches_the_same_status_as_one_that_does_not() -> (
    None
):
    assert _final(SimBackend) == _final(NoFeed)


@pytest.mark.parametrize("backend_cls", [SimBackend, NoFeed])
def test_a_unit_found_quiet_twice_is_not_visited_until_something_happens_to_it(
    backend_cls: type[SimBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    w = world(3, QUICK, ONE_TEST, backend_cls=backend_cls)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=3))
    for _ in range(4):
        w.pass_()
    w.backend.advance_to(w.backend.t + 30)  # every execution started
    visits = _visits(monkeypatch)
    for _ in range(3):  # observe, note quiet, put to sleep
        w.pass_()
    before = len(visits)
    for _ in range(20):
        assert w.pass_() is not None  # still asks to be woken as a pass visiting them would
    assert len(visits) == before  # nothing happened: nothing visited
    w.backend.advance_to(w.backend.t + 120)  # they finish
    w.pass_()
    assert len(visits) > before


def test_the_results_index_is_changed_in_place_not_copied_per_write() -> None:
    w = world(4, LONG, ONE_TEST)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2))
    w.drive(until=700.0)
    memory = w.engine.memory.of(w.run())
    index = memory.index
    assert index is not None and index.generation > 0
    generation = index.generation
    w.drive(until=1400.0)
    assert memory.index is index  # the same object, moved on by the changes
    assert index.generation > generation


def test_a_pass_that_changed_a_result_and_failed_makes_the_next_rebuild_the_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(2, QUICK, ONE_TEST, backend_cls=FailOnce)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2))
    w.drive(until=30.0)
    backend = w.backend
    assert isinstance(backend, FailOnce)
    backend.advance_to(backend.t + 200)  # both finish
    backend.fail = True
    with pytest.raises(RuntimeError):
        w.pass_()  # harvested into the index, never written
    memory = w.engine.memory.of(w.run())
    assert memory.index is None and len(memory.sleepers) == 0
    final = w.drive().run
    assert final.status is not None and final.status.phase is Phase.PASSED
    assert final.status.passed == 2


def test_a_status_write_puts_the_changes_into_the_stored_list_instead_of_copying_it() -> None:
    w = world(4, LONG, ONE_TEST)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2))
    w.drive(until=700.0)
    before = w.run().status
    assert before is not None and before.results
    held = before.results
    w.drive(until=1400.0)
    after = w.run().status
    assert after is not None and after.results is held  # the same list, changed in place
    assert after.results != [r for r in held if r.phase is Phase.PENDING]


def test_a_failed_status_write_leaves_the_stored_results_as_last_written() -> None:
    w = world(2, LONG, ONE_TEST, backend_cls=FailOnce)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2))
    w.drive(until=700.0)
    backend = w.backend
    assert isinstance(backend, FailOnce)
    written = w.run().status
    assert written is not None and written.results
    as_written = [r.model_dump() for r in written.results]
    backend.advance_to(backend.t + 700)  # the repeats finish: the next pass changes results
    backend.fail = True
    with pytest.raises(RuntimeError):
        w.pass_()
    stored = w.run().status
    assert stored is not None and stored.results is not None
    assert [r.model_dump() for r in stored.results] == as_written  # put back, none appended
    final = w.drive().run
    assert final.status is not None and final.status.passed == 2


def test_a_small_run_reads_its_own_nodes_and_never_lists_the_fleet() -> None:
    w = world(40, QUICK, ONE_TEST, backend_cls=Counting)
    w.submit(run_object(targets=["node-003", "node-004"], maxConcurrentNodes=2))
    final = w.drive().run
    assert final.status is not None and final.status.phase is Phase.PASSED
    assert isinstance(w.backend, Counting) and w.backend.listings == 0
    assert not any(n.annotations for n in w.backend.nodes.values())  # every stamp released


def test_sleepers_wake_on_their_time_their_execution_and_their_result() -> None:
    w = world(1, QUICK, ONE_TEST)
    w.submit(run_object(targets=["node-000"], maxConcurrentNodes=1))
    for _ in range(3):
        w.pass_()
    table = w.backend.executions("default", "run", w.run().metadata.uid or "")
    execution = next(iter(table))
    sleepers = Sleepers()
    now = w.backend.now()
    later = now.replace(year=now.year + 1)
    sleepers.sleep(("burn", "node-000"), execution, now)
    sleepers.sleep(("burn", "node-001"), _other(execution, "-b"), later)
    sleepers.sleep(("burn", "node-002"), _other(execution, "-c"), later)
    assert sleepers.waiting_in("burn") and len(sleepers) == 3
    sleepers.wake_due(now)  # its time came
    assert set(sleepers.of_test("burn")) == {"node-001", "node-002"}
    sleepers.wake_execution(execution.name + "-b")  # its execution changed
    assert set(sleepers.of_test("burn")) == {"node-002"}
    sleepers.wake_all([("burn", "node-002")])  # its result changed
    assert len(sleepers) == 0 and not sleepers.waiting_in("burn")


def _other(execution: Execution, suffix: str) -> Execution:
    return replace(execution, spec=replace(execution.spec, name=execution.name + suffix))


def _named(name: str, targets: list[str], uid: str) -> BurnInRun:
    run = run_object(name, targets=targets).model_copy(deep=True)
    run.metadata.uid = uid
    return run


def test_admission_is_shown_only_the_runs_that_could_share_a_named_node() -> None:
    index = RunIndex()
    a, b = _named("a", ["n1", "n2"], "u-a"), _named("b", ["n3", "n4"], "u-b")
    selector = run_object("c").model_copy(deep=True)
    selector.spec.target.node_names = None
    selector.spec.target.node_selector = {"pool": "x"}
    listing = [a, b, selector]
    assert index.rivals(listing, ["n2"]) == [a, selector]  # in listing order
    assert index.rivals(listing, ["n5"]) == [selector]  # only its selector can tell
    b2 = _named("b", ["n5"], "u-b")  # b changed: the index follows the fresh listing
    assert index.rivals([a, b2], ["n5"]) == [b2]
    assert index.rivals([a, b2], ["n3"]) == []
    assert len(index) == 2  # only the last listing is kept


_POOL_NODES = [f"n{i}" for i in range(6)]


def _full_walk(listing: Sequence[BurnInRun], targets: Sequence[str]) -> list[BurnInRun]:
    """What admission would be shown without an index: every listed run that names one of
    ``targets`` or names none (only its selector can tell), once, in listing order."""
    wanted = set(targets)
    out: list[BurnInRun] = []
    for run in listing:
        names = run.spec.target.node_names
        if (not names or wanted & set(names)) and all(run is not r for r in out):
            out.append(run)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(0, 29), max_size=24),  # the listing: runs of a pool, any order
            st.lists(st.sampled_from(_POOL_NODES), min_size=1, max_size=3),  # the targets
            st.sets(st.integers(0, 29), max_size=4),  # runs replaced before this listing
        ),
        min_size=1,
        max_size=8,
    )
)
def test_admission_is_shown_what_a_full_walk_of_each_fresh_listing_shows(
    steps: list[tuple[list[int], list[str], set[int]]],
) -> None:
    def made(i: int, version: int) -> BurnInRun:
        if i % 7 == 0:  # a selector run
            run = run_object(f"r{i}").model_copy(deep=True)
            run.spec.target.node_names = None
            run.spec.target.node_selector = {"pool": "x"}
            return run
        nodes = [_POOL_NODES[(i + version) % 6], _POOL_NODES[(i * 5 + version) % 6]]
        return _named(f"r{i}", sorted(set(nodes)), f"u{i}-{version}")

    pool = {i: made(i, 0) for i in range(30)}
    index = RunIndex()
    for version, (picked, targets, replaced) in enumerate(steps, start=1):
        for i in replaced:  # a new object: what a status write hands back
            pool[i] = made(i, version)
        listing = [pool[i] for i in picked]  # duplicates too: the index must not mind
        got = index.rivals(listing, targets)
        assert [id(r) for r in got] == [id(r) for r in _full_walk(listing, targets)]


def test_a_sweep_of_pairs_refuses_an_overlapping_run_as_a_full_walk_would() -> None:
    w = world(6, QUICK, ONE_TEST)
    names = list(w.backend.nodes)
    for i in range(3):
        w.submit(run_object(f"pair-{i}", targets=names[2 * i : 2 * i + 2], maxConcurrentNodes=2))
    w.submit(run_object("late", targets=[names[3], names[5]], maxConcurrentNodes=2))
    for name in ("pair-0", "pair-1", "pair-2", "late"):
        w.pass_(name)
    late = w.run("late").status
    assert late is not None and late.phase is Phase.ERROR
    assert "pair-1" in ((late.results or [])[0].message or "")


def test_the_cordon_list_is_kept_sorted_change_by_change_as_a_sort_would_give() -> None:
    written = ["n1", "n3", "n5"]
    held = Cordoned(written, canonical=True)
    assert held.listed(written) is written  # nothing moved: the list as written
    held.add("n4")
    held.discard("n1")
    held.add("n1")
    held.discard("n5")
    held.add("n0")
    assert held.listed(written) == sorted(held) == ["n0", "n1", "n3", "n4"]
    assert written == ["n1", "n3", "n5"]  # the written list is never changed
    unsure = Cordoned(["n9", "n2"])  # a status this engine did not write: sorted whole
    assert unsure.listed(["n9", "n2"]) == ["n2", "n9"]
    held.clear()
    assert held.listed(written) is None


PAIR = {"link": spec_of("ib-write-bw", scope="Pair", durationSeconds=60)}
GROUP = {"coll": spec_of("nccl", scope="Group", durationSeconds=60)}


def _checked_release(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make every end-of-pass release compare the nodes it looks at with a look at every held
    node; returns how many passes looked only at candidates."""
    partial: list[int] = []
    release = execute.release_idle

    def checked(ctx: Any, candidates: Any = None) -> None:
        if candidates is not None:
            idle = ctx.cordoned - ctx.busy
            assert {n for n in candidates if n in idle} == idle
            partial.append(1)
        release(ctx, candidates)

    monkeypatch.setattr(execute, "release_idle", checked)
    return partial


@pytest.mark.parametrize(
    ("tests", "nodes", "cap"), [(LONG, 6, 3), (QUICK, 5, 2), (PAIR, 2, 2), (GROUP, 3, 3)]
)
def test_a_pass_releasing_only_what_its_changes_made_idle_releases_every_idle_node(
    monkeypatch: pytest.MonkeyPatch, tests: dict[str, Any], nodes: int, cap: int
) -> None:
    partial = _checked_release(monkeypatch)
    entries = [{"testRef": name} for name in tests]
    w = world(nodes, tests, entries)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=cap))
    final = w.drive().run
    assert final.status is not None and final.status.phase in (Phase.PASSED, Phase.FAILED)
    assert not final.status.cordoned_nodes
    assert partial  # the candidates were used, and every time they held every idle node


def test_after_a_failed_write_the_next_pass_looks_at_every_held_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looked: list[bool] = []
    release = execute.release_idle

    def noted(ctx: Any, candidates: Any = None) -> None:
        looked.append(candidates is None)
        release(ctx, candidates)

    monkeypatch.setattr(execute, "release_idle", noted)
    w = world(2, LONG, ONE_TEST, backend_cls=FailOnce)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2))
    w.drive(until=700.0)
    backend = w.backend
    assert isinstance(backend, FailOnce)
    backend.advance_to(backend.t + 700)
    backend.fail = True
    with pytest.raises(RuntimeError):
        w.pass_()
    looked.clear()
    w.pass_()
    assert looked == [True]
