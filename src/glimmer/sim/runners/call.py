"""What the simulator backend hands a simulated runner, and what it gets back.

A :class:`RunnerCall` carries everything a real runner would learn from its pod: the kind, the
unit it belongs to (scope, nodes in rank order, this execution's node, role or rank), the
environment the operator injects (``BURNIN_*`` and the test's own variables), the duration, the
attempt, the test spec (host mounts decide which evidence a runner may read), the simulated
start time and the run's seed. A :class:`RunnerOutput` is exactly what a real runner leaves
behind: its stdout, its exit code, and how long it ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from glimmer.api.test import BurnInTestSpec


@dataclass(frozen=True)
class RunnerCall:
    """One execution of a runner: one node, one attempt.

    ``nodes`` is the unit's nodes: ``[n]`` for Node scope, ``[server, client]`` for Pair, every
    rank in rank order for Group. ``role`` is ``""``, ``"server"`` or ``"client"``; ``rank`` and
    ``nranks`` are set for Group executions only. ``started_at`` is simulated seconds since the
    twin's epoch.
    """

    kind: str
    scope: str
    nodes: tuple[str, ...]
    node: str
    role: str
    rank: int | None
    nranks: int | None
    env: Mapping[str, str]
    duration_seconds: int
    attempt: int
    spec: BurnInTestSpec
    started_at: float
    seed: int


@dataclass(frozen=True)
class RunnerOutput:
    """A finished execution: the pod log (stdout), the exit code, and the seconds it ran."""

    stdout: str
    exit_code: int
    elapsed_seconds: float
