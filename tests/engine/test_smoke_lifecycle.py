"""End to end on the simulator: a small run reaches its verdict and gives every node back."""

from __future__ import annotations

from engine_world import run_object, spec_of, world

from glimmer.contract.vocab import Phase
from glimmer.engine.keys import CORDON_OWNER, FINALIZER


def test_three_node_run_passes_and_releases_every_cordon() -> None:
    w = world(3, {"burn": spec_of()}, [{"testRef": "burn"}])
    targets = [n for n in w.backend.nodes]
    w.submit(run_object(targets=targets, maxConcurrentNodes=2))
    d = w.drive()
    run = d.run
    assert run.status is not None
    assert run.status.phase is Phase.PASSED, run.status
    assert run.status.passed == 3
    assert FINALIZER not in (run.metadata.finalizers or ())
    assert all(
        not n.unschedulable and CORDON_OWNER not in n.annotations for n in w.backend.nodes.values()
    )
