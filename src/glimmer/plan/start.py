"""Starting a run (§2.1–§2.4): resolve its profile and targets, admit it across runs, build and
pin its plan. The engine calls :func:`start_run` once, when a run has no plan pinned yet."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.plan.decision import Admitted, RefusalKind, Refused, StartDecision
from glimmer.plan.nodes import NodeInfo

__all__ = ["Admitted", "RefusalKind", "Refused", "StartDecision", "start_run"]


def start_run(
    run: BurnInRun,
    profile: BurnInProfile | None,
    tests: Mapping[str, BurnInTestSpec],
    nodes: Sequence[NodeInfo],
    other_runs: Sequence[BurnInRun],
    now: datetime,
) -> StartDecision:
    """Decide whether ``run`` starts, and on what plan.

    ``profile`` is the profile named by ``run.spec.profileRef`` (None: not found, so a built-in
    profile of that name is used if there is one); ``tests`` maps BurnInTest names to specs in
    the run's namespace; ``nodes`` is the backend's node list, read fresh; ``other_runs`` is
    every other BurnInRun in every namespace, read uncached; ``now`` is timezone-aware UTC.
    """
    raise NotImplementedError("start_run is being written")
