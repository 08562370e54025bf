"""What certification needs from a substrate, and nothing more (DESIGN.md, Certification).

The certification core — target selection, grouping, the categories, fault isolation, the
verdicts and the result — is written once over this protocol. A substrate answers three
questions: which nodes exist (names, labels, taints, cordons: what a cluster's Node list
says), what the backend fabric between some nodes is (for the expectation of a group without a
threshold of its own), and what one job left when it ran (:mod:`glimmer.certify.jobs`).

It asks for no clock: a category's runtime is read from its jobs' logs (the nccl-tests table's
times, the training log's timestamps, the diagnostic's own duration), so the same figures come
out on a virtual clock and a real one.

The simulator's substrate (the twin of a fleet) is ``glimmer.backends.sim.certify``.
"""

from __future__ import annotations

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
