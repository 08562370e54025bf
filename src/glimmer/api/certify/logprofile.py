"""LogProfile (``lp``, cluster-scoped): the regex recipe measurements read logs with.

Each pattern's ``example`` must match its ``regex`` when the profile loads, so a recipe that can
never match is refused up front rather than measuring nothing.
"""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from glimmer.api.base import Int32, Wire, item_error
from glimmer.api.certify.meta import CertifyResource

# Parts of Go's reference time (Mon Jan 2 15:04:05 MST 2006): a layout holds some of them.
_GO_LAYOUT_PARTS = ("2006", "Jan", "Mon", "01", "02", "15", "03", "04", "05", "MST")
# The captures the bandwidth parser reads (specs/certify.md §6.1).
BANDWIDTH_GROUPS = ("size", "algBW", "busBW")


class TimestampSpec(Wire):
    """How ``(?P<timestamp>…)`` captures are read (a Go time layout)."""

    layout: str = Field(min_length=1)

    @field_validator("layout")
    @classmethod
    def _go_layout(cls, layout: str) -> str:
        # A strftime pattern or a made-up one would read no timestamp, and every duration
        # measured from the log would be missing.
        if "%" in layout or not any(part in layout for part in _GO_LAYOUT_PARTS):
            raise ValueError(
                f"{layout!r} is not a Go time layout: write the reference time "
                "2006-01-02 15:04:05 the way the log prints it, e.g. '2006-01-02T15:04:05Z'"
            )
        return layout


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
            raise item_error(".example", f"example {self.example!r} does not match the regex")
        return self

    @model_validator(mode="after")
    def _units_name_captures(self) -> EventPattern:
        # A unit for a capture the regex does not have is a typo that leaves the real capture
        # read as seconds: a step time in ms would count 1000 times too long.
        groups = re.compile(self.regex).groupindex
        for name in sorted(self.units or {}):
            if name not in groups:
                have = ", ".join(groups) or "none"
                raise item_error(
                    f".units.{name}", f"the regex has no capture named {name!r} (it has: {have})"
                )
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

    @model_validator(mode="after")
    def _bandwidth_groups(self) -> Patterns:
        # Checked by the parser too (§6.1), but only once a measurement runs; refuse it here.
        found = self.bandwidth_result
        if found is not None:
            groups = re.compile(found.regex).groupindex
            missing = [g for g in BANDWIDTH_GROUPS if g not in groups]
            if missing:
                raise item_error(
                    ".bandwidthResult.regex",
                    "bandwidthResult regex must have named groups: size, algBW, busBW "
                    f"(missing: {', '.join(missing)})",
                )
        return self


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
