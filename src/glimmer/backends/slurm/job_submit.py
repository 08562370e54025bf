"""Submitting batch jobs: the window they are submitted in, what sbatch refuses for good, and an
sbatch a killed engine may still have running.

The engine cordons (drains) a node before it creates the node's execution, and a drained Slurm
node starts no new job at all, so a job of the run is submitted inside a window the nodes give
(:class:`Doors`): the node resumed for the run's reservation, the job submitted with
``--reservation`` and waited for until Slurm has allocated it, the drain put back on leaving.
A window's cost is Slurm's own clock, not glimmer's calls: a node resumed answers slurmctld's
ping about 0.7 s later, and a batch job is placed on the scheduler's next pass (every
``sched_interval`` seconds), so a window lasts one to two seconds whether it holds one job or
ten. :func:`open_all` therefore opens the nodes of every execution a pass created in ONE
window, and :func:`await_allocations` waits for all of their jobs with one ``squeue`` a poll.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar, runtime_checkable

from glimmer.backends.slurm.commands import Slurm
from glimmer.backends.slurm.job_state import NEVER_SEEN

POLL = 0.1  # seconds between two looks at the jobs a window waits for
SUBMIT_MARGIN = 5.0  # seconds beyond the call timeout an orphaned sbatch is waited for
PROBE_UNSUPPORTED = "ProbeUnsupported"
SUBMIT_REFUSED = "SubmitRefused"
# How sbatch words a lasting refusal, and the passing troubles it may also report.
REFUSAL_WORDS = ("invalid", "not available", "denied", "violates", "exceeds", "not allowed")
TRANSIENT_WORDS = ("unable to contact", "timed out", "temporarily", "connection", "try again")

T = TypeVar("T")


class Doors(Protocol):
    """The window in which a node drained by this run takes this run's job."""

    def opened(self, node: str, owner: str | None = None) -> AbstractContextManager[str | None]:
        """Open ``node`` for the block: the reservation to submit into, or None when there is
        nothing to open (the node is not drained for ``owner``'s run, ``<ns>/<name>/<uid>``)."""
        ...


@runtime_checkable
class ManyDoors(Protocol):
    """Doors that open several nodes in one window (:meth:`.nodes.SlurmNodes.opened_all`)."""

    def opened_all(
        self, owners: Mapping[str, str | None]
    ) -> AbstractContextManager[dict[str, str | None]]: ...


class NoDoors:
    """Nodes that are never drained by the run (a cluster driven without cordons, tests)."""

    def opened(self, node: str, owner: str | None = None) -> AbstractContextManager[str | None]:
        return nullcontext(None)


@contextlib.contextmanager
def open_all(doors: Doors, owners: Mapping[str, str | None]) -> Iterator[dict[str, str | None]]:
    """Open every node of ``owners`` (node -> owner) for the block: node -> reservation (None
    where there is nothing to open). Doors that open many nodes at once do it in one window;
    others are opened one after the other and closed in reverse."""
    if isinstance(doors, ManyDoors):
        with doors.opened_all(owners) as reservations:
            yield dict(reservations)
        return
    with contextlib.ExitStack() as held:
        opened = {node: held.enter_context(doors.opened(node, owners[node])) for node in owners}
        yield opened


def rounds(items: Sequence[T], node_of: Callable[[T], str]) -> list[list[T]]:
    """``items`` split into windows in which each node appears once (its first item in the
    first window, a second on the same node in the next), keeping their order: one window
    for the executions of one pass, which are on distinct nodes."""
    found: list[list[T]] = []
    for item in items:
        node = node_of(item)
        for window in found:
            if all(node_of(other) != node for other in window):
                window.append(item)
                break
        else:
            found.append([item])
    return found


def await_allocations(slurm: Slurm, job_ids: Sequence[str], wait: float) -> None:
    """Until Slurm has allocated every job of ``job_ids`` (running, configuring, or already
    ended), at most ``wait`` seconds: the window closes after this. One ``squeue`` per look,
    however many jobs the window holds."""
    waiting = set(job_ids)
    until = time.monotonic() + wait
    while waiting and time.monotonic() < until:
        out = slurm.run("squeue", "-h", "-t", "all", "-j", ",".join(sorted(waiting)), "-o", "%i %T")
        for line in out.splitlines():
            job, _, state = line.strip().partition(" ")
            if job in waiting and state.strip() and state.split()[0] != "PENDING":
                waiting.discard(job)
        if waiting:
            time.sleep(POLL)


def in_flight(record: Mapping[str, Any], timeout: float) -> bool:
    """Whether the record's last sbatch may still be running: it was started less than a
    call's ``timeout`` (plus a margin) ago by a process that did not live to record its
    answer. A SIGKILLed engine leaves its sbatch child running; submitting again before that
    child is done could submit the execution twice."""
    began = record.get("submitting")
    if not began:
        return False
    age = (host_now() - datetime.fromisoformat(str(began))).total_seconds()
    return age < timeout + SUBMIT_MARGIN


def refusal(returncode: int, stderr: str) -> str | None:
    """What sbatch said when it refused a job for good (an invalid gres, partition, node,
    reservation or time limit, a policy it violates), or None: accepted, or failed in a way
    another try may not (the controller unreachable, busy, a timeout). A refusal taken for
    transient would leave the run waiting for a job that never comes; one taken for a refusal
    only costs an Error attempt, so the test is the words Slurm uses for the lasting kind."""
    if returncode == 0:
        return None
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = lines[-1] if lines else ""
    text = said.lower()
    if any(word in text for word in TRANSIENT_WORDS):
        return None
    if any(word in text for word in REFUSAL_WORDS):
        return said.removeprefix("sbatch: error: ")
    return None


def refused_end(now: datetime, reason: str, message: str) -> dict[str, Any]:
    """The end of an execution refused before anything ran: an Error attempt (exit -1, never
    ran), as the local substrate reports what it cannot run."""
    return {
        "succeeded": False,
        "exit_code": NEVER_SEEN,
        "reason": "",
        "message": "",
        "container_reason": reason,
        "container_message": message,
        "started_at": now.isoformat(),
        "finished_at": now.isoformat(),
    }


def host_now() -> datetime:
    return datetime.now(UTC)
