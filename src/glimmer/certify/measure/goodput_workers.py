"""Goodput from two workers' logs (specs/certify.md §2.8 ``workerStrategy``, §6.2).

Megatron prints its checkpoint and start lines from rank 0 and its iteration lines from the
last rank, so a multi-node run's lifecycle and its steps are in different pods' logs. With
``type: Multi`` the lifecycle events (application start, checkpoint save, done, restore,
loaded) are read from ``lifecyclePod`` and the training steps from ``trainingStepPod``;
``Single`` reads everything from ``lifecyclePod``.

:class:`WorkerLogReader` merges the two streams into one :class:`TrainingLogReader` in kubelet
time order (ties: the lifecycle line first), so a checkpoint save begun on the lifecycle pod
stays pending while the other pod's steps go on, and its done line closes it whenever it comes.
A line is released only once no line of the other stream can still come before it: when that
stream has a later line queued, or was read up to a later time (``read_at``), or is closed. Fed
whole or in any chunks, the merge is the same.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Literal, TypeVar

from glimmer.api.certify.logprofile import WorkerStrategy
from glimmer.certify.measure.goodput_formula import Goodput
from glimmer.certify.measure.goodput_profile import MEGATRON, TrainingProfile
from glimmer.certify.measure.goodput_reader import (
    DEFAULT_MAX_STEPS,
    EVERY_EVENT,
    TrainingLogReader,
    kubelet_time,
)

Role = Literal["lifecycle", "steps"]
LIFECYCLE: Role = "lifecycle"
STEPS: Role = "steps"
# Which events each worker's lines are read for.
ROLE_EVENTS: Mapping[Role, frozenset[str]] = MappingProxyType(
    {
        LIFECYCLE: EVERY_EVENT - {"trainingStep", "warmupStep"},
        STEPS: frozenset(("trainingStep", "warmupStep")),
    }
)

Pod = TypeVar("Pod")


def pick_workers(pods: Sequence[Pod], strategy: WorkerStrategy | None) -> tuple[Pod, Pod] | None:
    """(lifecycle pod, training-step pod) of ``pods`` in worker order; the same pod twice unless
    the strategy is ``Multi``. None when there is no pod."""
    if not pods:
        return None

    def at(which: str) -> Pod:
        return pods[0] if which == "first" else pods[-1]

    lifecycle = at(strategy.lifecycle_pod if strategy else "first")
    if strategy is None or strategy.type != "Multi":
        return lifecycle, lifecycle
    return lifecycle, at(strategy.training_step_pod or strategy.lifecycle_pod)


class WorkerLogReader:
    """Two workers' logs, fed in chunks each, read as one training log."""

    def __init__(
        self,
        profile: TrainingProfile = MEGATRON,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
        pending_saves: Mapping[int | None, float] | None = None,
        reader: TrainingLogReader | None = None,
    ) -> None:
        # ``reader``: one resumed from a measurement's state, to merge the next lines into.
        self.reader = reader or TrainingLogReader(
            profile, max_steps=max_steps, pending_saves=pending_saves
        )
        # Lines of each role handed to the reader: a controller's cursor moves past those only,
        # and a line still queued (it may yet be preceded by the other pod's) is read again.
        self.released: dict[Role, int] = {LIFECYCLE: 0, STEPS: 0}
        self._partial: dict[Role, str] = {LIFECYCLE: "", STEPS: ""}
        self._queue: dict[Role, deque[tuple[float, str]]] = {LIFECYCLE: deque(), STEPS: deque()}
        self._last: dict[Role, float] = {LIFECYCLE: -math.inf, STEPS: -math.inf}
        self._read_to: dict[Role, float] = {LIFECYCLE: -math.inf, STEPS: -math.inf}
        self._closed: set[Role] = set()

    def feed(self, role: Role, chunk: str, read_at: float | None = None) -> None:
        """Read ``chunk`` of ``role``'s log; ``read_at``: no line before it will come later."""
        *lines, self._partial[role] = (self._partial[role] + chunk).split("\n")
        for raw in lines:
            self._queue_line(role, raw)
        if read_at is not None:
            self._read_to[role] = max(self._read_to[role], read_at)
        self._release()

    def close(self, role: Role | None = None) -> None:
        """``role``'s log (both when None) ended: its unterminated line is read."""
        for r in (role,) if role else (LIFECYCLE, STEPS):
            if self._partial[r]:
                raw, self._partial[r] = self._partial[r], ""
                self._queue_line(r, raw)
            self._closed.add(r)
        self._release()

    def figures(self, until: float | None = None) -> Goodput | None:
        """The figures of the lines merged so far (``until``: see TrainingLogReader)."""
        return self.reader.figures(until)

    def _queue_line(self, role: Role, raw: str) -> None:
        at = kubelet_time(raw)
        if at is not None:
            self._last[role] = at
        self._queue[role].append((self._last[role], raw))  # an unstamped line keeps its place

    def _mark(self, role: Role) -> float:
        return math.inf if role in self._closed else self._read_to[role]

    def _release(self) -> None:
        life, steps = self._queue[LIFECYCLE], self._queue[STEPS]
        while True:
            if life and steps:
                role: Role = LIFECYCLE if life[0][0] <= steps[0][0] else STEPS
            elif life and life[0][0] <= self._mark(STEPS):
                role = LIFECYCLE
            elif steps and steps[0][0] < self._mark(LIFECYCLE):
                role = STEPS
            else:
                return
            _, raw = self._queue[role].popleft()
            self.reader.raw_line(raw, ROLE_EVENTS[role])
            self.released[role] += 1


def parse_workers(
    lifecycle_log: str, steps_log: str, profile: TrainingProfile = MEGATRON
) -> Goodput | None:
    """Goodput of a finished multi-worker run from its two workers' whole logs."""
    reader = WorkerLogReader(profile)
    reader.feed(LIFECYCLE, lifecycle_log)
    reader.feed(STEPS, steps_log)
    reader.close()
    return reader.figures()
