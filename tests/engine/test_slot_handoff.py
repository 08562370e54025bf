"""A harvest hands its slot on in the same pass (issue 12): when a unit settles and nothing else
holds its node, the pass that recorded it starts the next unit in its place, at the same
instant a second pass would have, with one status write instead of two. Anything it is not sure
of (an open result, a failure under failFast, a pass that does not count what loads each node)
is left to that second pass, so every run reaches the status the two-pass walk reaches."""

from __future__ import annotations

from typing import Any

import pytest
from engine_world import ScriptedRunner, reply, run_object, spec_of, world
from test_engine_costs_what_changed import NoFeed

from glimmer.backends.sim.backend import SimBackend
from glimmer.contract.vocab import Phase
from glimmer.engine import reconciler

QUICK = {"burn": spec_of(durationSeconds=60)}
TWO = {"burn": spec_of(durationSeconds=60), "soak": spec_of(durationSeconds=120)}
REPEATED = {"burn": spec_of(durationSeconds=60, repeatCount=2)}


def _passes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, int, int, int]]:
    """(instant, harvested, handed on, created) of every pass the engine makes."""
    seen: list[tuple[float, int, int, int]] = []
    inner = reconciler.Engine._reconcile

    def recorded(self: Any, run: Any, memory: Any) -> Any:
        outcome, ctx = inner(self, run, memory)
        seen.append((self.backend.t, ctx.harvested, ctx.handed_on, len(ctx.created)))
        return outcome, ctx

    monkeypatch.setattr(reconciler.Engine, "_reconcile", recorded)
    return seen


def test_the_pass_that_harvests_a_settled_unit_starts_the_next_node_in_its_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(4, QUICK, [{"testRef": "burn"}])
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=1))
    passes = _passes(monkeypatch)
    d = w.drive()
    assert d.run.status is not None and d.run.status.phase is Phase.PASSED
    harvests = [p for p in passes if p[1]]
    assert len(harvests) == 4
    # The first three each start the next node themselves; the last leaves the run to finish.
    assert [p[2:] for p in harvests[:3]] == [(1, 1)] * 3
    instants = [p[0] for p in passes]
    for at, *_ in harvests[:3]:
        assert instants.count(at) == 1  # no second pass at that instant


def test_an_open_result_leaves_its_next_attempt_to_the_next_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w = world(2, REPEATED, [{"testRef": "burn"}])
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=1))
    passes = _passes(monkeypatch)
    w.drive()
    first = next(p for p in passes if p[1])  # the first repeat of the first node
    assert first[2] == 0
    assert [p[0] for p in passes].count(first[0]) == 2  # the repeat is created at once


def _final(backend_cls: type[SimBackend], scenario: str) -> dict[str, Any]:
    runner = ScriptedRunner()
    tests: dict[str, Any] = QUICK
    entries: list[dict[str, Any]] = [{"testRef": "burn"}]
    spec: dict[str, Any] = {"maxConcurrentNodes": 2}
    profile_spec: dict[str, Any] = {}
    if scenario == "two tests":
        tests, entries = TWO, [{"testRef": "burn"}, {"testRef": "soak"}]
    elif scenario == "repeats":
        tests = REPEATED
    elif scenario == "fail fast":
        runner.on(reply("GPU_BURN_FAIL: miscompares", 1), node="node-001")
        profile_spec["failFast"] = True
    elif scenario == "retried error":
        runner.on(reply("GPU_BURN_ERROR: no device", 3), node="node-002", attempt=1)
        spec["retryOnErrorLimit"] = 1
    w = world(6, tests, entries, runner=runner, backend_cls=backend_cls, **profile_spec)
    w.submit(run_object(targets=list(w.backend.nodes), **spec))
    d = w.drive()
    assert d.run.status is not None and d.run.status.phase in (Phase.PASSED, Phase.FAILED)
    return d.run.status.model_dump()


@pytest.mark.parametrize(
    "scenario", ["one test", "two tests", "repeats", "fail fast", "retried error"]
)
def test_handing_slots_on_reaches_the_status_of_the_two_pass_walk(scenario: str) -> None:
    # NoFeed's passes do not count what loads each node, so they never hand a slot on.
    assert _final(SimBackend, scenario) == _final(NoFeed, scenario)
