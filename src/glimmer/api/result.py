"""The result part of a run's status: one TestResult per execution unit, with its attempts,
violations, not-evaluated gates and artifacts.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import Field

from glimmer.api.base import ZERO, Int32, Int64, Wire
from glimmer.contract.vocab import Phase, Scope

# Why an attempt was made: the first, a repeat after a pass, a retry after an Error, or the next
# segment of a soak.
Trigger = Literal["Initial", "Repeat", "ErrorRetry", "Segment"]


class Violation(Wire):
    """One violated gate of the deciding evaluation. ``cause``/``kind`` are free text on purpose:
    a newer writer may add words an older reader must still accept."""

    index: Int32 = Field(ge=0)
    metric: str
    cause: str | None = None
    kind: str | None = None
    reason: str | None = None


class NotEvaluated(Wire):
    """A RequiredIfMeasurable gate skipped because the runner declared its metric ``n/a``."""

    metric: str
    reason: str


class ArtifactRef(Wire):
    """Where a runner's non-metric evidence was stored, or why it was dropped."""

    name: str
    media_type: str | None = None
    size_bytes: Int64 | None = Field(None, ge=0)
    digest: str | None = None
    config_map: str | None = None
    key: str | None = None
    dropped: str | None = None


class TestAttempt(Wire):
    """One pod (or set of pods) for a unit."""

    __test__: ClassVar[bool] = False  # not a pytest class, despite the name

    attempt: Int32 = Field(ge=1)
    trigger: Trigger
    node: str | None = None
    pod_name: str | None = None
    phase: Phase
    # Raw exit code; -1 when no runner container terminated.
    exit_code: Int32 | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    last_checkpoint_at: datetime | None = None
    metrics: dict[str, str] | None = None
    message: str | None = None


class TestResult(Wire):
    """The outcome of one execution unit. An empty ``kind`` marks a synthetic result (``resolve``,
    ``admission``), which has no scope and no nodes."""

    __test__: ClassVar[bool] = False  # not a pytest class, despite the name

    name: str
    kind: str = Field("", json_schema_extra=ZERO)
    # Optional: synthetic results have none, and a required scope once wedged status writes.
    scope: Scope | None = None
    phase: Phase
    nodes: list[str] | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    last_checkpoint_at: datetime | None = None
    metrics: dict[str, str] | None = None
    message: str | None = None
    violations: list[Violation] | None = None
    not_evaluated: list[NotEvaluated] | None = None
    unmeasurable: list[str] | None = None
    artifacts: list[ArtifactRef] | None = None
    variant_axes: dict[str, str] | None = None
    repeats_required: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    repeats_completed: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    error_retries: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    segments_required: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    segments_completed: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    segment_seconds: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    aggregated_metrics: dict[str, str] | None = None
    truncated_attempts: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    attempts: list[TestAttempt] | None = None

    @property
    def synthetic(self) -> bool:
        """True for results the controller made up (no test ran): their kind is empty."""
        return self.kind == ""
