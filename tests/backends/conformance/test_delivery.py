"""Delivery (engine/backend.py, ``Deliverer``): a delivery is taken or reported failed, and
handing one over never writes the run (the engine records what was delivered itself)."""

from __future__ import annotations

from substrates import NAMESPACE, Substrate, run_object

from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import Backend, Delivery


def _stored_run(substrate: Substrate, backend: Backend) -> BurnInRun:
    run = substrate.submit(backend, run_object("run", ("node-000",)))
    return backend.write_status(run, BurnInRunStatus(phase=Phase.PASSED, passed=1))


def _delivery(run: BurnInRun) -> Delivery:
    return Delivery(
        "RunPhaseChanged",
        NAMESPACE,
        run.name,
        run.metadata.uid or "",
        "Passed",
        "Passed",
        view=run,
    )


def test_deliver_returns_true_when_the_sinks_take_it_and_leaves_the_run_as_stored(
    substrate: Substrate, backend: Backend
) -> None:
    run = _stored_run(substrate, backend)
    assert backend.deliver(_delivery(run)) is True
    stored = backend.get_run(NAMESPACE, "run")
    assert stored is not None and stored.model_dump() == run.model_dump()


def test_deliver_returns_false_when_a_sink_fails_and_never_changes_the_run(
    substrate: Substrate, backend: Backend
) -> None:
    run = _stored_run(substrate, backend)
    view = run.model_dump()
    substrate.refuse_sinks(backend)
    assert backend.deliver(_delivery(run)) is False
    assert backend.deliver(_delivery(run)) is False  # and again: a refusal is no state
    stored = backend.get_run(NAMESPACE, "run")
    assert stored is not None and stored.model_dump() == view
    assert run.model_dump() == view  # the view handed over is not written to either
