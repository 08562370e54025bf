"""A value a runner prints, however hostile, settles its unit: it never wedges the run."""

from __future__ import annotations

import pytest
from engine_world import GATE_MISCOMPARES, ScriptedRunner, reply, run_object, spec_of, world

from glimmer.contract.vocab import Phase


@pytest.mark.parametrize("value", ["0x1p1024", "1e999", "-0x1p1024", "nan", "0x" + "f" * 400])
def test_a_value_past_any_float_fails_its_unit_and_the_run_settles(value: str) -> None:
    # issue 10 item 1: 0x1p1024 used to raise OverflowError in every pass, leaving the run
    # Running with its nodes cordoned.
    tests = {"burn": spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])}
    runner = ScriptedRunner(default="miscompares=0").on(
        reply(f"miscompares={value}"), node="node-001"
    )
    w = world(3, tests, [{"testRef": "burn"}], runner=runner)
    w.submit(run_object(targets=["node-000", "node-001", "node-002"], maxConcurrentNodes=3))
    status = w.drive().run.status
    assert status is not None and status.phase is Phase.FAILED
    by_node = {tuple(r.nodes or ()): r.phase for r in status.results or ()}
    assert by_node == {
        ("node-000",): Phase.PASSED,
        ("node-001",): Phase.FAILED,
        ("node-002",): Phase.PASSED,
    }
    assert not status.cordoned_nodes
