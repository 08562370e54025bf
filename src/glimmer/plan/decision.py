"""What starting a run decides: admitted with a pinned plan, or refused with the reason.

The engine applies the decision; it never re-derives it. An admitted run carries its plan (and
the annotation value that pins it) plus the conditions to set at markRunning. A refused run
carries the synthetic result to append and whether the refusal is a configuration error (which
the engine holds for its 2-minute resolve grace before settling the run ``Error``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from glimmer.api.k8s import Condition
from glimmer.api.pinned import PlanDocument
from glimmer.api.result import TestResult
from glimmer.contract.vocab import Phase

RefusalKind = Literal["resolve", "admission"]


@dataclass(frozen=True)
class Admitted:
    """The run may start: pin ``plan`` (as ``plan_annotation``) and set the conditions."""

    plan: PlanDocument
    admitted_condition: Condition
    # Set only when variants expanded something (§1.4); the engine sets it at markRunning.
    plan_expanded_condition: Condition | None
    thresholds_sound_condition: Condition
    # The value of the burnin.glimmer.ai/plan annotation (raw JSON, or gzip+base64 when large).
    plan_annotation: str


@dataclass(frozen=True)
class Refused:
    """The run must not start. ``kind`` names the synthetic result (``resolve``/``admission``)."""

    kind: RefusalKind
    message: str
    # Conditions to set on the run (Admitted=False/TargetsBusy for an admission refusal).
    conditions: Sequence[Condition]
    # True: the spec is wrong or names something missing; the engine waits out the resolve
    # grace (another object may still be applied) before settling. False: settle now.
    config_error: bool
    # When the refusal was decided: the synthetic result's finishedAt.
    at: datetime
    # The resolved profile's sinks, when the profile resolved (the Error is delivered there).
    sinks: Sequence[str] = ()

    def synthetic_result(self) -> TestResult:
        """The synthetic result to append: empty kind, no scope, no nodes, phase Error."""
        return TestResult(
            name=self.kind,
            kind="",
            phase=Phase.ERROR,
            finished_at=self.at,
            message=self.message,
        )


StartDecision = Admitted | Refused
