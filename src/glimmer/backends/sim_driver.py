"""Driving one run to its end on the simulator: reconcile, jump the clock, repeat.

The driver alternates a reconcile pass with a jump of the virtual clock to whichever comes
first — the next simulated event or the wake-up the pass asked for — and never sleeps. A pass
that asks to be called again at once is called again at the same instant.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from glimmer.api.run import BurnInRun
from glimmer.backends.sim import SimBackend
from glimmer.contract.vocab import Phase
from glimmer.engine.keys import FINALIZER, PENDING_DELIVERY_ANNOTATION
from glimmer.engine.reconciler import Engine

Progress = Callable[[BurnInRun, SimBackend], None]
TERMINAL = frozenset({Phase.PASSED, Phase.FAILED, Phase.ERROR, Phase.CANCELLED})


class StuckRun(RuntimeError):
    """The run asked to be called again at once more times than any run needs."""


@dataclass
class Drive:
    """How a drive went: the final run, passes made, events applied, simulated seconds."""

    run: BurnInRun
    passes: int
    events: int
    simulated_seconds: float


def settled(run: BurnInRun) -> bool:
    """Terminal, torn down (no finalizer) and with its verdict delivered."""
    phase = run.status.phase if run.status else Phase.PENDING
    annotations = run.metadata.annotations or {}
    return (
        phase in TERMINAL
        and FINALIZER not in (run.metadata.finalizers or ())
        and PENDING_DELIVERY_ANNOTATION not in annotations
    )


def drive(
    backend: SimBackend,
    engine: Engine,
    namespace: str,
    name: str,
    *,
    progress: Progress | None = None,
    max_passes: int = 5_000_000,
    until: float = math.inf,
) -> Drive:
    """Reconcile ``namespace/name`` until it settles, nothing more can happen (a suspended
    run), or the clock reaches ``until`` seconds."""
    start_t = backend.t
    start_events = backend.events_processed
    passes = 0
    immediate = 0
    run = backend.get_run(namespace, name)
    while run is not None:
        outcome = engine.reconcile(namespace, name)
        passes += 1
        run = backend.get_run(namespace, name) or run
        if progress is not None:
            progress(run, backend)
        if settled(run) or passes >= max_passes:
            break
        if outcome.requeue_after == 0:
            immediate += 1
            if immediate > 10_000:
                raise StuckRun(f"BurnInRun {name} asked to be reconciled again at once forever")
            continue
        immediate = 0
        wake = backend.t + outcome.requeue_after if outcome.requeue_after is not None else math.inf
        if not backend.advance(min(wake, until)) or backend.t >= until:
            break
    final = backend.get_run(namespace, name) or run
    assert final is not None
    return Drive(final, passes, backend.events_processed - start_events, backend.t - start_t)


def run_to_completion(
    backend: SimBackend,
    engine: Engine,
    run: BurnInRun,
    *,
    progress: Progress | None = None,
) -> BurnInRun:
    """Submit ``run`` (if it is not stored yet) and drive it to its end; the final run."""
    namespace = run.metadata.namespace or "default"
    if backend.get_run(namespace, run.name) is None:
        run = backend.submit(run)
    return drive(backend, engine, namespace, run.name, progress=progress).run
