"""The simulator's timing draws and clock (issue 12): each execution's start latency and run
time are those of a generator seeded for that execution alone, whatever else was drawn before
(the backend reseeds one generator instead of making one per draw), and ``now`` follows the
clock and the epoch however they move."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest
from engine_world import GATE_MISCOMPARES, ScriptedRunner, run_object, spec_of, world

from glimmer.backends.sim.backend import JITTER, MAX_OVERRUN, START_LATENCY, SimBackend, _seed_of

GATED = spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES], durationSeconds=600)


@pytest.mark.parametrize("seed", [0, 7])
def test_each_execution_draws_its_timing_from_its_own_seed(seed: int) -> None:
    w = world(
        6,
        {"a": GATED},
        [{"testRef": "a"}],
        seed=seed,
        runner=ScriptedRunner(default="miscompares=0"),
    )
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=3))
    w.drive()
    executions = list(w.backend.executions("default", "run", w.run().metadata.uid))
    assert len(executions) == 6
    for e in executions:
        assert e.started_at is not None and e.finished_at is not None
        latency = random.Random(_seed_of(seed, e.name)).uniform(*START_LATENCY)
        run = random.Random(_seed_of(seed, e.name, "run"))
        runs = min(600 * (1.0 + run.uniform(0.0, JITTER)), 600 + MAX_OVERRUN)
        assert (e.started_at - e.created_at).total_seconds() == pytest.approx(latency, abs=2e-6)
        assert (e.finished_at - e.started_at).total_seconds() == pytest.approx(runs, abs=2e-6)


def test_now_follows_the_clock_and_the_epoch() -> None:
    start = datetime(2026, 10, 2, tzinfo=UTC)
    backend = SimBackend([], start=start)
    assert backend.now() == start
    backend.t = 90.5
    assert backend.now() == start + timedelta(seconds=90.5)
    assert backend.now() is backend.now()  # one instant per clock reading
    later = datetime(2027, 1, 1, tzinfo=UTC)
    backend.epoch = later
    assert backend.now() == later + timedelta(seconds=90.5)
    backend.t = 0.0
    assert backend.now() == later
