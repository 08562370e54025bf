"""BurnInSchedule (``bisc``): creates a BurnInRun on a cron schedule."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import ClassVar

from pydantic import Field, field_validator

from glimmer.api.base import ZERO, Bool, Int32, Int64, Wire
from glimmer.api.cadence import ScheduleError, load_zone, parse_cadence
from glimmer.api.k8s import Condition, ObjectReference
from glimmer.api.meta import Resource
from glimmer.api.target import TargetSelector
from glimmer.contract.vocab import Phase

# A zone prefix inside the cron text would make the zone depend on how it was written; the zone
# belongs in spec.timeZone alone.
_ZONE_PREFIXES = ("TZ=", "CRON_TZ=")


class ConcurrencyPolicy(StrEnum):
    """What a tick does while a run this schedule created is still active. No Replace."""

    FORBID = "Forbid"
    ALLOW = "Allow"


class BurnInRunTemplate(Wire):
    """Fields stamped onto every run a schedule creates."""

    ttl_seconds_after_finished: Int32 | None = Field(None, ge=0)
    deadline_seconds: Int32 | None = Field(None, ge=0)
    max_concurrent_nodes: Int32 = Field(1, ge=1)
    retry_on_error_limit: Int32 = Field(0, ge=0)
    baseline: Bool = False


class BurnInScheduleSpec(Wire):
    """When to run which profile on which nodes."""

    # 5-field cron or a descriptor such as "@every 168h". Parsed here, so a file with a bad one
    # is refused at load; the schedule reconciler still reports one that got past the schema
    # (another client, an older glimmer) on the ScheduleValid condition.
    schedule: str = Field(
        min_length=1,
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "!self.startsWith('TZ=') && !self.startsWith('CRON_TZ=')",
                    "message": "set the zone in spec.timeZone, not as a TZ= prefix",
                }
            ]
        },
    )
    # IANA zone; empty means UTC, never the process's local zone.
    time_zone: str | None = None
    profile_ref: str = Field(min_length=1)
    target: TargetSelector
    suspend: Bool = False
    concurrency_policy: ConcurrencyPolicy = ConcurrencyPolicy.FORBID
    starting_deadline_seconds: Int32 | None = Field(None, ge=0)
    successful_runs_history_limit: Int32 = Field(3, ge=0)
    failed_runs_history_limit: Int32 = Field(10, ge=0)
    run_template: BurnInRunTemplate | None = None

    @field_validator("schedule")
    @classmethod
    def _cadence(cls, text: str) -> str:
        if text.lstrip().startswith(_ZONE_PREFIXES):
            raise ValueError("a TZ= or CRON_TZ= prefix is not allowed; set spec.timeZone")
        try:
            parse_cadence(text)
        except ScheduleError as e:
            raise ValueError(str(e)) from None
        return text

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, name: str | None) -> str | None:
        try:
            load_zone(name)
        except ScheduleError as e:
            raise ValueError(str(e)) from None
        return name


class BurnInScheduleStatus(Wire):
    """The schedule's cursor and the runs it owns."""

    last_schedule_time: datetime | None = None
    last_successful_time: datetime | None = None
    active: list[ObjectReference] | None = None
    last_run_name: str | None = None
    last_run_phase: Phase | None = None
    missed_schedules: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    observed_generation: Int64 | None = None
    conditions: list[Condition] | None = None


class BurnInSchedule(Resource):
    """Periodic re-verification: a run per tick."""

    KIND: ClassVar[str] = "BurnInSchedule"
    SHORT_NAME: ClassVar[str] = "bisc"
    PLURAL: ClassVar[str] = "burninschedules"

    spec: BurnInScheduleSpec
    status: BurnInScheduleStatus | None = None
