"""The drivers: what calls the engine's reconcile pass, and when.

Two clocks, one driver each:

* the **virtual clock** (the simulator): reconcile, then jump the clock straight to whichever
  comes first — the next substrate event or the wake-up the pass asked for — and never sleep.
  A pass that asks to be called again at once is called again at the same instant.
  :func:`drive` drives one run, :func:`drive_many` several side by side; both, and the
  schedule command, keep their runs' wake-ups in one :class:`RunWakes`;
* the **wall clock** (this host, Slurm): reconcile, then sleep until the wake-up the pass asked
  for, at most ``poll`` seconds (executions change without telling the driver), until the run
  settles (:func:`drive_wall_clock`).

A run is *settled* when it is terminal, torn down (no finalizer) and its verdict delivered.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import BackendError, Clock, RunStore
from glimmer.engine.keys import FINALIZER, PENDING_DELIVERY_ANNOTATION
from glimmer.engine.reconciler import TERMINAL_RUN_PHASES, Engine

MAX_RETRIES = 100  # consecutive failed passes before the drive gives up
MAX_IMMEDIATE = 10_000  # passes in a row asking to be called again at once
TERMINAL = TERMINAL_RUN_PHASES  # defined once, by the engine
RunKey = tuple[str, str]


class VirtualClock(RunStore, Clock, Protocol):
    """A substrate on a virtual clock: ``t`` seconds since its epoch, moved only by
    :meth:`advance`; ``touched`` holds the uids of runs whose executions changed."""

    t: float
    events_processed: int
    touched: set[str]

    def advance(self, until: float) -> bool:
        """Apply events up to ``until``; False when nothing can happen any more."""
        ...

    def submit(self, run: BurnInRun) -> BurnInRun:
        """Store a new run."""
        ...


B = TypeVar("B", bound=VirtualClock)


class StuckRun(RuntimeError):
    """The run asked to be called again at once more times than any run needs."""


@dataclass
class Drive:
    """How a drive went: the final run, passes made, events applied, simulated seconds."""

    run: BurnInRun
    passes: int
    events: int
    simulated_seconds: float


def _phase(run: BurnInRun) -> Phase:
    return run.status.phase if run.status else Phase.PENDING


def torn_down(run: BurnInRun) -> bool:
    """Terminal and with no finalizer left (its executions and cordons released)."""
    return _phase(run) in TERMINAL and FINALIZER not in (run.metadata.finalizers or ())


def settled(run: BurnInRun) -> bool:
    """Terminal, torn down (no finalizer) and with its verdict delivered."""
    return torn_down(run) and PENDING_DELIVERY_ANNOTATION not in (run.metadata.annotations or {})


def drive(
    backend: B,
    engine: Engine,
    namespace: str,
    name: str,
    *,
    progress: Callable[[BurnInRun, B], None] | None = None,
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
        if math.isfinite(delivery_grace) and torn_down(run):
            until = min(until, backend.t + delivery_grace)
            delivery_grace = math.inf  # the bound is set once, at the first torn-down pass
        if outcome.requeue_after == 0:
            immediate += 1
            if immediate > MAX_IMMEDIATE:
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
    backend: B,
    engine: Engine,
    run: BurnInRun,
    *,
    progress: Callable[[BurnInRun, B], None] | None = None,
) -> BurnInRun:
    """Submit ``run`` (if it is not stored yet) and drive it to its end; the final run."""
    namespace = run.metadata.namespace or "default"
    if backend.get_run(namespace, run.name) is None:
        run = backend.submit(run)
    return drive(backend, engine, namespace, run.name, progress=progress).run


@dataclass
class RunWakes:
    """When each driven run next wants a pass (virtual seconds); a run whose executions
    changed is due at once. A settled run leaves the table. ``max_retries`` failed passes in a
    row of one run are retried before the failure is raised (0: raised at once)."""

    max_retries: int = 0
    wake: dict[RunKey, float] = field(default_factory=dict)
    uid_of: dict[str, RunKey] = field(default_factory=dict)
    failures: dict[RunKey, int] = field(default_factory=dict)
    passes: int = 0
    last: BurnInRun | None = None

    def add(self, key: RunKey, at: float) -> None:
        self.wake[key] = at

    def next_wake(self) -> float:
        return min(self.wake.values(), default=math.inf)

    def pass_due(
        self,
        backend: VirtualClock,
        engine: Engine,
        on_settled: Callable[[BurnInRun], None] | None = None,
    ) -> None:
        """One pass of every run due now or touched since the last call."""
        due = [key for key, at in self.wake.items() if at <= backend.t]
        due += [self.uid_of[u] for u in backend.touched if self.uid_of.get(u) in self.wake]
        backend.touched.clear()
        for key in dict.fromkeys(due):
            if key not in self.wake:
                continue
            try:
                outcome = engine.reconcile(*key)
            except BackendError:
                # A lost write race: the pass is made again (a bounded number of times).
                self.failures[key] = self.failures.get(key, 0) + 1
                if self.failures[key] > self.max_retries:
                    raise
                continue
            self.failures.pop(key, None)
            self.passes += 1
            run = backend.get_run(*key)
            if run is None or settled(run):
                self.wake.pop(key, None)
                self.last = run or self.last
                if run is not None and on_settled is not None:
                    on_settled(run)
                continue
            self.last = run
            self.uid_of[run.metadata.uid or ""] = key
            after = outcome.requeue_after
            self.wake[key] = backend.t + after if after is not None else math.inf


def drive_many(
    backend: B,
    engine: Engine,
    names: Sequence[RunKey],
    *,
    progress: Callable[[B], None] | None = None,
) -> Drive:
    """Drive several runs side by side: a run is reconciled when it asked to be, or when one of
    its executions changed. Returns the last run, the passes over all runs, the events applied
    and the simulated seconds until every run settled."""
    start_t, start_events = backend.t, backend.events_processed
    wakes = RunWakes()
    for key in names:
        wakes.add(key, backend.t)
    while wakes.wake:
        wakes.pass_due(backend, engine)
        if progress is not None:
            progress(backend)
        if not wakes.wake:
            break
        if wakes.next_wake() <= backend.t:
            continue
        if not backend.advance(wakes.next_wake()):
            break
    assert wakes.last is not None
    return Drive(
        wakes.last, wakes.passes, backend.events_processed - start_events, backend.t - start_t
    )


class WallClock(RunStore, Protocol):
    """A substrate on real time: its runs change whether or not the driver looks."""


def drive_wall_clock(
    backend: WallClock,
    engine: Engine,
    namespace: str,
    name: str,
    *,
    poll: float = 10.0,
    sleep: Callable[[float], None] = time.sleep,
    max_passes: int | None = None,
) -> BurnInRun | None:
    """Reconcile ``namespace/name`` until it settles or is gone, sleeping between passes for
    the wake-up the pass asked for, at most ``poll`` seconds. Failed passes are retried after
    ``poll`` (at most :data:`MAX_RETRIES` in a row). Returns the final run (None: deleted)."""
    passes = failures = 0
    while True:
        try:
            outcome = engine.reconcile(namespace, name)
        except BackendError:
            failures += 1
            if failures > MAX_RETRIES:
                raise
            sleep(poll)
            continue
        failures = 0
        passes += 1
        run = backend.get_run(namespace, name)
        if run is None or settled(run) or (max_passes is not None and passes >= max_passes):
            return run
        after = outcome.requeue_after
        wait = poll if after is None else min(max(after, 0.0), poll)
        if wait > 0:
            sleep(wait)
