"""LogProfile (``lp``, cluster-scoped): the regex recipe measurements read logs with.

Each pattern's ``example`` must match its ``regex`` when the profile loads, so a recipe that can
never match is refused up front rather than measuring nothing.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from glimmer.api.base import Int32, Wire
from glimmer.api.certify_meta import CertifyResource


class TimestampSpec(Wire):
    """How ``(?P<timestamp>…)`` captures are read (a Go time layout)."""

    layout: str = Field(min_length=1)


class EventPattern(Wire):
    """One event: a regex with named groups, an example line it must match, capture units."""

    regex: str = Field(min_length=1)
    example: str | None = None
    units: dict[str, Literal["s", "ms", "us"]] | None = None

    @field_validator("regex")
    @classmethod
    def _compiles(cls, regex: str) -> str:
        try:
            re.compile(regex)
        except re.error as e:
            raise ValueError(f"invalid regex: {e}") from None
        return regex

    @model_validator(mode="after")
    def _example_matches(self) -> EventPattern:
        if self.example is not None and not re.search(self.regex, self.example):
            raise ValueError(f"example {self.example!r} does not match the regex")
        return self


class Patterns(Wire):
    """The events a profile can recognise."""

    training_step: EventPattern | None = None
    checkpoint_save: EventPattern | None = None
    checkpoint_done: EventPattern | None = None
    checkpoint_restore: EventPattern | None = None
    checkpoint_loaded: EventPattern | None = None
    application_start: EventPattern | None = None
    warmup_step: EventPattern | None = None
    bandwidth_result: EventPattern | None = None


class WorkerStrategy(Wire):
    """Which pods' logs are read."""

    type: Literal["Single", "Multi"] | None = None
    lifecycle_pod: Literal["first", "last"] = "first"
    training_step_pod: Literal["first", "last"] | None = None
    replicated_job_name: str = "trainer"


class LogProfileSpec(Wire):
    """Timestamp layout, event patterns, which worker to read, warmup and log interval."""

    timestamp: TimestampSpec
    patterns: Patterns
    worker_strategy: WorkerStrategy | None = None
    container_name: str | None = None
    warmup_steps: Int32 | None = Field(None, ge=0)
    log_interval: Int32 | None = Field(None, ge=1)


class LogProfile(CertifyResource):
    """A log recipe for goodput and bandwidth measurements (cluster-scoped)."""

    KIND: ClassVar[str] = "LogProfile"
    SHORT_NAME: ClassVar[str] = "lp"
    PLURAL: ClassVar[str] = "logprofiles"
    NAMESPACED: ClassVar[bool] = False

    spec: LogProfileSpec
