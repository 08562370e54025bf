"""Live progress comes from the run object alone."""

from __future__ import annotations

from typing import Any

from engine_world import ScriptedRunner, run_object, spec_of, world

from glimmer.contract.vocab import Phase
from glimmer.engine.progress import progress_of


def test_progress_counts_every_planned_unit_from_start_to_verdict() -> None:
    tests = {"a": spec_of("gpu-burn"), "b": spec_of("host-health")}
    w = world(3, tests, [{"testRef": "a"}, {"testRef": "b"}], runner=ScriptedRunner())
    w.submit(run_object(targets=list(w.backend.nodes), maxConcurrentNodes=2))
    seen: list[tuple[int, int, int]] = []

    def watch(run: Any, backend: Any) -> None:
        p = progress_of(run)
        seen.append((p.total, p.settled, p.running))

    w.drive(progress=watch)
    final = progress_of(w.run())
    assert final.total == 6 and final.settled == 6 and final.fraction == 1.0
    assert final.units[("b", "node-002")] is Phase.PASSED
    assert all(total in (0, 6) for total, _, _ in seen)
    assert max(running for _, _, running in seen) <= 2
    settled = [s for _, s, _ in seen]
    assert settled == sorted(settled)
