"""What certification needs from a substrate, and nothing more (DESIGN.md, Certification).

The certification core — target selection, grouping, the categories, fault isolation, the
verdicts and the result — is written once over this protocol. A substrate answers three
questions: which nodes exist (names, labels, taints, cordons: what a cluster's Node list
says), what the backend fabric between some nodes is (for the expectation of a group without a
threshold of its own), and what one job left when it ran (:mod:`glimmer.certify.jobs`) — or
what several independent jobs left, which a substrate may run side by side.

It asks for no clock: a category's runtime is read from its jobs' logs (the nccl-tests table's
times, the training log's timestamps, the diagnostic's own duration), so the same figures come
out on a virtual clock and a real one.

The simulator's substrate (the twin of a fleet) is ``glimmer.backends.sim.certify``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from glimmer.certify.grouping import NodeInfo
from glimmer.certify.jobs import Job, JobLog


@dataclass(frozen=True)
class Fabric:
    """The backend fabric a group shares: its common rails and the slowest port among them."""

    rails: int
    speed_gbps: float


class Substrate(Protocol):
    """Where a certification runs."""

    @property
    def name(self) -> str:
        """The fleet or cluster's name, as errors and the result document name it."""
        ...

    @property
    def platform(self) -> str:
        """The result document's ``platform`` (specs/certify.md §8), e.g. ``simulator``."""
        ...

    @property
    def taint_note(self) -> str:
        """What this substrate's nodes carry in the way of taints, told to a user whose
        taintSelectors matched none ("" when there is nothing to add)."""
        ...

    def nodes(self) -> list[NodeInfo]:
        """Every node as the cluster lists it now, with labels, taints and cordon (read fresh)."""
        ...

    def fabric(self, nodes: tuple[str, ...]) -> Fabric | None:
        """The backend rails every one of ``nodes`` has, and the slowest port on them; None
        when they share no rail."""
        ...

    def run(self, job: Job) -> JobLog:
        """Run one job to its end; its log and exit code. A job that cannot start is a log
        with its error and a non-zero exit code, never an exception."""
        ...

    def run_all(self, jobs: Sequence[Job]) -> list[JobLog]:
        """Run independent jobs; their logs, in the order of ``jobs``.

        Independent: no job's outcome decides whether another runs or what it is (the DCGM
        job of every node, the groups of a category), so a substrate may run them side by side.
        They are not always node-disjoint — an overflow group borrows nodes of a full group —
        and a substrate that runs them at once runs jobs sharing a node one after the other (a
        GPU measured by two jobs at once measures neither). Each log is what :meth:`run` of
        that job alone would give: order and concurrency change no outcome."""
        ...


def run_jobs(substrate: Substrate, jobs: Sequence[Job]) -> list[JobLog]:
    """``substrate.run_all(jobs)``; one :meth:`~Substrate.run` after another on a substrate
    written before the protocol had ``run_all`` (a test's canned one), which gives the same
    logs by the protocol's own rule."""
    many = getattr(substrate, "run_all", None)
    if many is None:
        return [substrate.run(j) for j in jobs]
    logs: list[JobLog] = many(jobs)
    return logs
