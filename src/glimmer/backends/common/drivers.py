"""The drivers: what calls the engine's reconcile pass, and when.

Two clocks, one driver each:

* the **virtual clock** (the simulator): :func:`drive_virtual` makes a pass of every run that
  is due or whose executions changed, then jumps the clock straight to whichever comes first —
  the next substrate event or the earliest wake-up asked for — and never sleeps. A pass that
  asks to be called again at once is called again at the same instant. One run
  (:func:`drive`), several side by side (:func:`drive_many`) and the schedule command (which
  adds its ticks through ``side``) are all this one loop over one wake-up table,
  :class:`RunWakes`;
* the **wall clock** (this host, Slurm): reconcile, then sleep until the wake-up the pass asked
  for, at most ``poll`` seconds (executions change without telling the driver), until the run
  settles (:func:`drive_wall_clock`).

A run is *settled* when it is terminal, torn down (no finalizer) and its verdict delivered.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import BackendError, Clock, NotFound, RunStore
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


@dataclass
class RunWakes:
    """When each driven run next wants a pass (virtual seconds), earliest first in a heap; a
    run whose executions changed is due at once, and a settled run leaves the table.

    ``max_retries`` failed passes in a row of one run are retried before the failure is raised
    (0: raised at once). ``delivery_grace``: once a run is torn down with its verdict not yet
    delivered, it is driven (its envelope re-sent) for at most that many more seconds, so a dead
    sink never keeps a finished run going."""

    max_retries: int = 0
    delivery_grace: float = math.inf
    wake: dict[RunKey, float] = field(default_factory=dict)
    uid_of: dict[str, RunKey] = field(default_factory=dict)
    failures: dict[RunKey, int] = field(default_factory=dict)
    passes: int = 0
    left: int = 0  # runs that have left the table (settled, gone, or past their grace)
    last: BurnInRun | None = None
    _heap: list[tuple[float, int, RunKey]] = field(default_factory=list, init=False, repr=False)
    _seq: int = field(default=0, init=False, repr=False)
    _immediate: dict[RunKey, int] = field(default_factory=dict, init=False, repr=False)
    _give_up: dict[RunKey, float] = field(default_factory=dict, init=False, repr=False)

    def add(self, key: RunKey, at: float) -> None:
        """Drive ``key``; its first pass is due at ``at``."""
        self._set(key, at)

    def _set(self, key: RunKey, at: float) -> None:
        self.wake[key] = at
        if math.isfinite(at):
            # Entries are never removed: one whose time no longer matches ``wake`` is stale.
            self._seq += 1
            heapq.heappush(self._heap, (at, self._seq, key))

    def _current(self, entry: tuple[float, int, RunKey]) -> bool:
        return self.wake.get(entry[2]) == entry[0]

    def next_wake(self) -> float:
        """The earliest wake-up asked for (inf: none)."""
        while self._heap and not self._current(self._heap[0]):
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else math.inf

    def _due(self, t: float) -> list[RunKey]:
        due = []
        while self._heap and self._heap[0][0] <= t:
            entry = heapq.heappop(self._heap)
            if self._current(entry):
                due.append(entry[2])
        return due

    def _drop(self, key: RunKey, run: BurnInRun | None) -> None:
        self.left += 1
        self.wake.pop(key, None)
        self._immediate.pop(key, None)
        self._give_up.pop(key, None)
        self.failures.pop(key, None)
        self.last = run or self.last

    def pass_due(
        self,
        backend: VirtualClock,
        engine: Engine,
        on_settled: Callable[[BurnInRun], None] | None = None,
        on_pass: Callable[[BurnInRun], None] | None = None,
    ) -> None:
        """One pass of every run due now or touched since the last call; ``on_pass`` sees each
        run after its pass, ``on_settled`` each run that settled."""
        due = self._due(backend.t)
        due += [self.uid_of[u] for u in backend.touched if self.uid_of.get(u) in self.wake]
        backend.touched.clear()
        for key in dict.fromkeys(due):
            if key not in self.wake:
                continue
            if self._give_up.get(key, math.inf) <= backend.t:
                self._drop(key, backend.get_run(*key))  # the grace is over: left undelivered
                continue
            try:
                outcome = engine.reconcile(*key)
            except BackendError:
                # A lost write race: the pass is made again (a bounded number of times).
                self.failures[key] = self.failures.get(key, 0) + 1
                if self.failures[key] > self.max_retries:
                    raise
                self._set(key, backend.t)
                continue
            self.failures.pop(key, None)
            self.passes += 1
            run = backend.get_run(*key)
            if run is not None and on_pass is not None:
                on_pass(run)
            if run is None or settled(run):
                self._drop(key, run)
                if run is not None and on_settled is not None:
                    on_settled(run)
                continue
            self.last = run
            self.uid_of[run.metadata.uid or ""] = key
            self._schedule(key, run, backend.t, outcome.requeue_after)

    def _schedule(self, key: RunKey, run: BurnInRun, t: float, after: float | None) -> None:
        if after == 0:
            self._immediate[key] = self._immediate.get(key, 0) + 1
            if self._immediate[key] > MAX_IMMEDIATE:
                raise StuckRun(f"BurnInRun {key[1]} asked to be reconciled again at once forever")
        else:
            self._immediate.pop(key, None)
        at = t + after if after is not None else math.inf
        if math.isfinite(self.delivery_grace) and torn_down(run):
            # The bound is set once, at the first torn-down pass.
            give_up = self._give_up.setdefault(key, t + self.delivery_grace)
            at = min(at, give_up)
        self._set(key, at)


def drive_virtual(
    backend: VirtualClock,
    engine: Engine,
    wakes: RunWakes,
    *,
    until: float = math.inf,
    max_passes: int | None = None,
    side: Callable[[], float] | None = None,
    progress: Callable[[], None] | None = None,
    paced: Callable[[float], None] | None = None,
    on_settled: Callable[[BurnInRun], None] | None = None,
    on_pass: Callable[[BurnInRun], None] | None = None,
) -> None:
    """The virtual-clock loop: passes of the runs in ``wakes`` that are due or touched, then a
    jump of the clock to the earliest of the next event and the next wake-up; until every run
    has left the table, nothing more can happen (a run waiting on a change that never comes),
    the clock reaches ``until`` or ``max_passes`` passes were made.

    ``side`` is called first at every instant, for work driven beside the runs (the schedule
    command's ticks, a sweep starting pairs as others finish); it answers when it next wants to
    be called (inf: not again), and is called again at the same instant whenever runs left the
    table, since it may start others in their place. ``progress``
    is called after each round of passes, ``paced`` with the virtual seconds of each jump;
    ``on_pass`` and ``on_settled`` as :meth:`RunWakes.pass_due` calls them."""
    while True:
        side_wake = side() if side is not None else math.inf
        left = wakes.left
        wakes.pass_due(backend, engine, on_settled, on_pass)
        if progress is not None:
            progress()
        if max_passes is not None and wakes.passes >= max_passes:
            return
        upcoming = min(side_wake, wakes.next_wake())
        if upcoming <= backend.t or (side is not None and wakes.left > left):
            continue  # due again now, or runs left: the side looks again at this instant
        if upcoming == math.inf and not wakes.wake:
            return
        before = backend.t
        if not backend.advance(min(upcoming, until)):
            return
        if paced is not None and backend.t > before:
            paced(backend.t - before)
        if backend.t >= until:
            return


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
    ``delivery_grace`` more seconds (a dead webhook must not keep a finished run going).
    A failed pass is made again, at most :data:`MAX_RETRIES` times in a row."""
    first = backend.get_run(namespace, name)
    if first is None:
        raise NotFound(f"BurnInRun {name} not found")
    start_t, start_events = backend.t, backend.events_processed
    wakes = RunWakes(max_retries=MAX_RETRIES, delivery_grace=delivery_grace, last=first)
    wakes.add((namespace, name), backend.t)
    on_pass = (lambda run: progress(run, backend)) if progress is not None else None
    drive_virtual(backend, engine, wakes, until=until, max_passes=max_passes, on_pass=on_pass)
    final = backend.get_run(namespace, name) or wakes.last or first
    return Drive(final, wakes.passes, backend.events_processed - start_events, backend.t - start_t)


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
    report = (lambda: progress(backend)) if progress is not None else None
    drive_virtual(backend, engine, wakes, progress=report)
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
    progress: Callable[[BurnInRun], None] | None = None,
) -> BurnInRun | None:
    """Reconcile ``namespace/name`` until it settles or is gone, sleeping between passes for
    the wake-up the pass asked for, at most ``poll`` seconds. Failed passes are retried after
    ``poll`` (at most :data:`MAX_RETRIES` in a row); ``progress`` sees the run after each
    pass. Returns the final run (None: deleted)."""
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
        if run is not None and progress is not None:
            progress(run)
        if run is None or settled(run) or (max_passes is not None and passes >= max_passes):
            return run
        after = outcome.requeue_after
        wait = poll if after is None else min(max(after, 0.0), poll)
        if wait > 0:
            sleep(wait)
