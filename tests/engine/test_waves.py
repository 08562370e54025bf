"""Waves under the cap, as properties: whatever the targets, cap, durations and outcomes, the
run never loads or cordons more nodes than the cap allows, every target gets exactly one result
per Node test, and every node ends as it was found."""

from __future__ import annotations

from typing import Any

from engine_world import GATE_MISCOMPARES, ScriptedRunner, reply, run_object, spec_of, world
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glimmer.engine.keys import CORDON_OWNER


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 9),
    cap=st.integers(1, 4),
    durations=st.lists(st.sampled_from([300, 600, 900]), min_size=1, max_size=3),
    failing=st.sets(st.integers(0, 8), max_size=3),
    erroring=st.sets(st.integers(0, 8), max_size=3),
    retries=st.integers(0, 1),
    seed=st.integers(0, 1000),
    admin_cordoned=st.sets(st.integers(0, 8), max_size=2),
)
def test_waves_respect_the_cap_and_release_everything(
    n: int,
    cap: int,
    durations: list[int],
    failing: set[int],
    erroring: set[int],
    retries: int,
    seed: int,
    admin_cordoned: set[int],
) -> None:
    tests = {
        f"t{i}": spec_of("gpu-burn", durationSeconds=d, thresholds=[GATE_MISCOMPARES])
        for i, d in enumerate(durations)
    }
    runner = ScriptedRunner(default="miscompares=0")
    for i in failing:
        runner.on(reply("miscompares=1"), node=f"node-{i:03d}")
    for i in erroring:
        runner.on(reply("driver fell over", 3), node=f"node-{i:03d}")
    w = world(n, tests, [{"testRef": t} for t in tests], runner=runner, seed=seed)
    for i in admin_cordoned:
        if i < n:
            w.backend.update_node(f"node-{i:03d}", unschedulable=True)
    found = {name: node.unschedulable for name, node in w.backend.nodes.items()}
    w.submit(
        run_object(targets=list(w.backend.nodes), maxConcurrentNodes=cap, retryOnErrorLimit=retries)
    )
    worst = [0, 0]

    def watch(run: Any, backend: Any) -> None:
        live = backend.executions("default", "run", run.metadata.uid).live()
        cordons = [v for v in backend.nodes.values() if v.annotations.get(CORDON_OWNER)]
        worst[0] = max(worst[0], len({e.node for e in live}))
        worst[1] = max(worst[1], len(cordons))

    status = w.drive(progress=watch).run.status
    assert worst[0] <= cap and worst[1] <= cap
    keys = [(r.name, r.nodes[0]) for r in status.results]
    assert len(keys) == len(set(keys)) == n * len(tests)
    assert {name: node.unschedulable for name, node in w.backend.nodes.items()} == found
    assert all(not node.annotations for node in w.backend.nodes.values())
