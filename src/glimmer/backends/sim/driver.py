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
from glimmer.backends.sim.backend import SimBackend
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import BackendError
from glimmer.engine.keys import FINALIZER, PENDING_DELIVERY_ANNOTATION
from glimmer.engine.reconciler import Engine

Progress = Callable[[BurnInRun, SimBackend], None]
MAX_RETRIES = 100  # consecutive failed passes before the drive gives up
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


def _torn_down(run: BurnInRun) -> bool:
    phase = run.status.phase if run.status else Phase.PENDING
    return phase in TERMINAL and FINALIZER not in (run.metadata.finalizers or ())


def drive(
    backend: SimBackend,
    engine: Engine,
    namespace: str,
    name: str,
    *,
    progress: Progress | None = None,
    max_passes: int = 5_000_000,
    until: float = math.inf,
    delivery_grace: float = math.inf,
) -> Drive:
    """Reconcile ``namespace/name`` until it settles, nothing more can happen (a suspended
    run), or the clock reaches ``until`` seconds. Once the verdict is final and the run torn
    down, a terminal envelope its sinks have not accepted is re-sent for at most
    ``delivery_grace`` more seconds (a dead webhook must not keep a finished run going)."""
    start_t = backend.t
    start_events = backend.events_processed
    passes = 0
    immediate = 0
    run = backend.get_run(namespace, name)
    conflicts = 0
    while run is not None:
        try:
            outcome = engine.reconcile(namespace, name)
        except BackendError:
            # A lost write race or a transient failure: the pass is simply made again.
            conflicts += 1
            if conflicts > MAX_RETRIES:
                raise
            continue
        conflicts = 0
        passes += 1
        run = backend.get_run(namespace, name) or run
        if progress is not None:
            progress(run, backend)
        if settled(run) or passes >= max_passes:
            break
        if math.isfinite(delivery_grace) and _torn_down(run):
            until = min(until, backend.t + delivery_grace)
            delivery_grace = math.inf  # the bound is set once, at the first torn-down pass
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


def drive_many(
    backend: SimBackend,
    engine: Engine,
    names: list[tuple[str, str]],
    *,
    progress: Callable[[SimBackend], None] | None = None,
) -> Drive:
    """Drive several runs side by side: a run is reconciled when it asked to be, or when one of
    its executions changed. Returns the last run, the passes over all runs, the events applied
    and the simulated seconds until every run settled."""
    start_t, start_events = backend.t, backend.events_processed
    wake: dict[tuple[str, str], float] = dict.fromkeys(names, backend.t)
    uid_of: dict[str, tuple[str, str]] = {}
    passes = 0
    last: BurnInRun | None = None
    while wake:
        due = [key for key, at in wake.items() if at <= backend.t]
        due += [uid_of[u] for u in backend.touched if u in uid_of and uid_of[u] in wake]
        backend.touched.clear()
        for key in dict.fromkeys(due):
            if key not in wake:
                continue
            outcome = engine.reconcile(*key)
            passes += 1
            run = backend.get_run(*key)
            if run is None or settled(run):
                wake.pop(key, None)
                last = run or last
                continue
            last = run
            uid_of[run.metadata.uid or ""] = key
            after = outcome.requeue_after
            wake[key] = backend.t + after if after is not None else math.inf
        if progress is not None:
            progress(backend)
        if not wake:
            break
        if min(wake.values()) <= backend.t:
            continue
        if not backend.advance(min(wake.values())):
            break
    assert last is not None
    return Drive(last, passes, backend.events_processed - start_events, backend.t - start_t)
