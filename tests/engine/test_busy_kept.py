"""The busy set an engine keeps between its passes (execute._kept_busy) is, at every pass, the
set a pass builds from nothing: the live executions' nodes, the unrecorded ones' and the open
results'. Only a few nodes are looked at again each pass, so a node missed there would hold a
slot for ever, or free one under load: whatever the machinery does, the two must agree."""

from __future__ import annotations

from typing import Any

import pytest
from engine_world import GATE_MISCOMPARES, Interlock, ScriptedRunner, reply, run_object, spec_of
from engine_world import world as make_world
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.backends.sim.backend import REACTION_WINDOW
from glimmer.backends.sim.faults import ExecutionFault
from glimmer.engine import cordon, execute

MODES = ["deleted", "evicted", "unschedulable", "image-pull", "hang", "log-unreadable"]
fault = st.builds(
    ExecutionFault,
    mode=st.sampled_from(MODES),
    node=st.sampled_from([None, "node-000", "node-001", "node-002", "node-003"]),
    test=st.sampled_from([None, "burn", "bw"]),
    attempt=st.sampled_from([None, 1, 2]),
    after=st.sampled_from([0.05, 1.0, 30.0, 400.0]),
)


class Compared:
    """Wraps ``_kept_busy``: each kept set is checked against a fresh build of the same pass."""

    def __init__(self) -> None:
        self.kept = 0
        self.original = execute._kept_busy

    def __call__(self, ctx: Any, loaded: Any, unrecorded: set[str]) -> set[str] | None:
        fresh = execute._fresh_busy(ctx, (), loaded, unrecorded) if loaded is not None else None
        kept = self.original(ctx, loaded, unrecorded)
        if kept is not None:
            self.kept += 1
            assert kept == fresh, (sorted(kept - (fresh or set())), sorted((fresh or set()) - kept))
        return kept


def _drive(
    n: int,
    cap: int,
    faults: list[ExecutionFault],
    failing: set[int],
    seed: int,
    reaction_window: float = REACTION_WINDOW,
) -> Any:
    tests = {
        "burn": spec_of("gpu-burn", durationSeconds=300, thresholds=[GATE_MISCOMPARES]),
        "bw": spec_of("memory-bw", repeatCount=2, checkpointIntervalSeconds=100),
    }
    runner = ScriptedRunner(default="miscompares=0")
    entries = [{"testRef": t} for t in tests]
    w = make_world(
        n, tests, entries, runner=runner, faults=faults, backend_cls=Interlock, seed=seed
    )
    w.backend.reaction_window = reaction_window
    for i in failing:
        w.runner.on(reply("miscompares=3"), node=f"node-{i:03d}", test="burn")
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=cap, retryOnErrorLimit=1))
    return w.drive(progress=lambda run, backend: backend.after_pass()).run


def test_a_clean_run_keeps_its_busy_set_and_it_is_always_the_fresh_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compared = Compared()
    monkeypatch.setattr(execute, "_kept_busy", compared)
    run = _drive(6, 3, [], set(), seed=1)
    assert run.status.phase.value == "Passed"
    assert compared.kept > 10  # the kept set was used, not always rebuilt


class WalkChecked:
    """Wraps ``_walk_start``: every target the walk for new nodes steps over without a look (from
    the cursor to where it starts) has a result or is busy, as the full walk would have found."""

    def __init__(self) -> None:
        self.skipped = 0
        self.original = execute._walk_start

    def __call__(self, ctx: Any, test: Any, distinct: Any) -> int:
        start = self.original(ctx, test, distinct)
        cursor = ctx.memory.cursor.get(test.name, 0)
        for node in distinct[cursor:start]:
            assert node in ctx.busy or ctx.book.get(test.name, node) is not None, node
            self.skipped += 1
        return start


class SweepChecked:
    """Wraps ``cordon.release_idle``: the candidates it is given hold every idle cordon, so it
    releases what a comparison of every cordon with the busy set would."""

    def __init__(self) -> None:
        self.narrowed = 0
        self.original = cordon.release_idle

    def __call__(self, ctx: Any, candidates: Any = None) -> None:
        if candidates is not None:
            self.narrowed += 1
            idle = ctx.cordoned - ctx.busy
            assert idle <= set(candidates), sorted(idle - set(candidates))
        self.original(ctx, candidates)


def test_a_clean_run_past_its_cap_skips_the_units_it_launched_and_sweeps_what_was_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walk, sweep = WalkChecked(), SweepChecked()
    monkeypatch.setattr(execute, "_walk_start", walk)
    monkeypatch.setattr(cordon, "release_idle", sweep)  # mid-pass, before a stamp at the cap
    monkeypatch.setattr(execute, "release_idle", sweep)  # at the end of the pass
    # Every finish seen at its own instant: a pass that hands one slot on starts its walk past
    # the units launched before (with the simulator's reaction window the three finishes of a
    # wave are seen together, and the walk starts at the first).
    run = _drive(6, 3, [], set(), seed=1, reaction_window=0.0)
    assert run.status.phase.value == "Passed"
    assert walk.skipped > 0  # the launched units were stepped over without a look
    assert sweep.narrowed > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 6),
    cap=st.integers(1, 4),
    faults=st.lists(fault, max_size=4),
    failing=st.sets(st.integers(0, 5), max_size=2),
    seed=st.integers(0, 1000),
    window=st.sampled_from([0.0, REACTION_WINDOW]),
)
def test_under_machinery_faults_the_kept_busy_set_the_walk_and_the_sweep_miss_no_node(
    n: int, cap: int, faults: list[ExecutionFault], failing: set[int], seed: int, window: float
) -> None:
    """Each shortcut is checked at every pass against the full look it stands for, whether the
    engine sees each change at its own instant or several in one pass."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(execute, "_kept_busy", Compared())
        patch.setattr(execute, "_walk_start", WalkChecked())
        sweep = SweepChecked()
        patch.setattr(cordon, "release_idle", sweep)
        patch.setattr(execute, "release_idle", sweep)
        _drive(n, cap, faults, failing, seed, window)
