"""BurnInRun (``bir``): one execution of a profile against target nodes, and its status."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar

from pydantic import Field

from glimmer.api.base import ZERO, Bool, Int32, Int64, Wire
from glimmer.api.k8s import Condition
from glimmer.api.meta import Resource
from glimmer.api.result import TestResult
from glimmer.api.target import TargetSelector
from glimmer.contract.vocab import Phase

CANCEL_REASON_MAX = 512


class CancelPolicy(StrEnum):
    """What happens to in-flight work when a run is cancelled."""

    GRACEFUL = "Graceful"
    IMMEDIATE = "Immediate"


class BurnInRunSpec(Wire):
    """Which profile, on which nodes, under which limits. Some fields are read live each pass
    (maxConcurrentNodes, retryOnErrorLimit, deadlineSeconds, suspend, cancel); the rest is pinned
    into the plan at start."""

    profile_ref: str = Field(min_length=1)
    target: TargetSelector
    # The facility interlock: how many nodes may be under load at once.
    max_concurrent_nodes: Int32 = Field(1, ge=1)
    force: Bool = False
    retry_on_error_limit: Int32 = Field(0, ge=0)
    deadline_seconds: Int32 | None = Field(None, ge=0)
    suspend: Bool = False
    baseline: Bool = False
    cancel: Bool = False
    cancel_policy: CancelPolicy = CancelPolicy.GRACEFUL
    cancel_reason: str | None = Field(None, max_length=CANCEL_REASON_MAX)
    ttl_seconds_after_finished: Int32 | None = Field(None, ge=0)


class BurnInRunStatus(Wire):
    """The run's checkpoint: everything a restarted reconciler needs to resume."""

    phase: Phase = Phase.PENDING
    fingerprint: dict[str, str] | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    results: list[TestResult] | None = None
    passed: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    failed: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    errored: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    skipped: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    cordoned_nodes: list[str] | None = None
    prior_unschedulable: dict[str, bool] | None = None
    # Declared by the original API and never written; kept so such objects still load.
    sink_status: dict[str, Any] | None = Field(
        None, json_schema_extra={"x-kubernetes-preserve-unknown-fields": True}
    )
    observed_generation: Int64 | None = None
    conditions: list[Condition] | None = None


class BurnInRun(Resource):
    """One execution of a profile."""

    KIND: ClassVar[str] = "BurnInRun"
    SHORT_NAME: ClassVar[str] = "bir"
    PLURAL: ClassVar[str] = "burninruns"

    spec: BurnInRunSpec
    status: BurnInRunStatus | None = None
