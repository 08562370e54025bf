"""What one schedule reconcile asks its driver to do, in order, and how a driver does it.

The order is the point (specs/burnin.md §7.1 step 8): the cursor (``lastScheduleTime``) is
written BEFORE the run is created. A driver that dies between the two leaves a moved cursor and
no run, so the tick is lost once rather than fired twice; the reverse order could start two
runs for one tick. :func:`apply` runs the actions strictly in order and stops at the first that
fails, so a failed status write never lets the create after it happen.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from glimmer.api.run import BurnInRun
from glimmer.api.schedule import BurnInScheduleStatus


@dataclass(frozen=True)
class WriteStatus:
    """Replace the schedule's status."""

    status: BurnInScheduleStatus


@dataclass(frozen=True)
class CreateRun:
    """Create a run (its name is already decided)."""

    run: BurnInRun


@dataclass(frozen=True)
class DeleteRun:
    """Delete a finished run that history pruning no longer keeps."""

    namespace: str
    name: str


Action = WriteStatus | CreateRun | DeleteRun


class ScheduleStore(Protocol):
    """Where a driver applies actions: the API server, or the simulator and an in-memory
    schedule."""

    def write_schedule_status(self, status: BurnInScheduleStatus) -> None: ...

    def create_run(self, run: BurnInRun) -> None: ...

    def delete_run(self, namespace: str, name: str) -> None: ...


def apply(actions: Iterable[Action], store: ScheduleStore) -> None:
    """Apply ``actions`` in order; an exception stops the rest (and propagates)."""
    for action in actions:
        match action:
            case WriteStatus(status=status):
                store.write_schedule_status(status)
            case CreateRun(run=run):
                store.create_run(run)
            case DeleteRun(namespace=namespace, name=name):
                store.delete_run(namespace, name)
