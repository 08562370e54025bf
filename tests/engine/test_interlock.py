"""The interlock at every instant (§2.6, invariant 23): however the machinery misbehaves, one
run never has more nodes under load, nor more nodes cordoned, than ``maxConcurrentNodes`` — not
after a pass, at every call the engine makes and every event the substrate applies."""

from __future__ import annotations

from typing import Any

from engine_world import GATE_MISCOMPARES, Interlock, ScriptedRunner, reply, run_object, spec_of
from engine_world import world as make_world
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.backends.sim.backend import REACTION_WINDOW
from glimmer.backends.sim.faults import ExecutionFault
from glimmer.contract.vocab import TERMINAL_PHASES


def _world(n: int, tests: dict[str, Any], faults: list[ExecutionFault], **kw: Any) -> Any:
    runner = ScriptedRunner(default="miscompares=0")
    entries = [{"testRef": t} for t in tests]
    return make_world(n, tests, entries, runner=runner, faults=faults, backend_cls=Interlock, **kw)


def test_an_execution_evicted_before_its_attempt_is_recorded_keeps_its_slot_until_harvested() -> (
    None
):
    # node-000 is evicted a tenth of a second after it starts, before any pass saw it run.
    tests = {"burn": spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])}
    faults = [ExecutionFault("evicted", node="node-000", attempt=1, after=0.1)]
    w = _world(4, tests, faults)
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2, retryOnErrorLimit=1))
    status = w.drive().run.status
    assert w.backend.worst == [2, 2]
    first = next(r for r in status.results if r.nodes == ["node-000"])
    assert [a.trigger for a in first.attempts] == ["Initial", "ErrorRetry"]


def test_the_next_test_does_not_cordon_its_first_wave_while_the_last_wave_is_still_cordoned() -> (
    None
):
    tests = {
        "first": spec_of("gpu-burn", durationSeconds=300),
        "second": spec_of("gpu-burn", durationSeconds=300),
    }
    w = _world(4, tests, [])
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2))
    w.drive()
    assert w.backend.worst == [2, 2]


MODES = [
    "deleted",
    "evicted",
    "unschedulable",
    "image-pull",
    "hang",
    "log-unreadable",
    "early-exit",
]
fault = st.builds(
    ExecutionFault,
    mode=st.sampled_from(MODES),
    node=st.sampled_from([None, "node-000", "node-001", "node-002", "node-003", "node-004"]),
    test=st.sampled_from([None, "burn", "bw"]),
    attempt=st.sampled_from([None, 1, 2]),
    after=st.sampled_from([0.05, 1.0, 30.0, 400.0]),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 6),
    cap=st.integers(1, 4),
    faults=st.lists(fault, max_size=4),
    failing=st.sets(st.integers(0, 5), max_size=2),
    retries=st.integers(0, 2),
    seed=st.integers(0, 1000),
    window=st.sampled_from([0.0, REACTION_WINDOW]),
)
def test_no_machinery_fault_takes_the_run_past_its_cap_at_any_instant(
    n: int,
    cap: int,
    faults: list[ExecutionFault],
    failing: set[int],
    retries: int,
    seed: int,
    window: float,
) -> None:
    tests = {
        "burn": spec_of("gpu-burn", durationSeconds=300, thresholds=[GATE_MISCOMPARES]),
        "bw": spec_of("memory-bw", repeatCount=2, checkpointIntervalSeconds=100),
    }
    w = _world(n, tests, faults, seed=seed)
    w.backend.reaction_window = window  # each change seen at its instant, or several at once
    for i in failing:
        w.runner.on(reply("miscompares=3"), node=f"node-{i:03d}", test="burn")
    w.submit(
        run_object(targets=list(w.backend.nodes), maxConcurrentNodes=cap, retryOnErrorLimit=retries)
    )
    run = w.drive(progress=lambda run, backend: backend.after_pass()).run
    assert w.backend.worst[0] <= cap and w.backend.worst[1] <= cap
    assert w.backend.outside == []
    assert all(r.phase in TERMINAL_PHASES for r in run.status.results)
    assert all(not node.unschedulable and not node.annotations for node in w.backend.nodes.values())
