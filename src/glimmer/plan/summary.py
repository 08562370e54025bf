"""A profile's plan summary: what each planned test runs, for how long, behind how many gates.

Durations are per unit of work (one node, one pair, one group); a run multiplies them by its
waves. The kind's default (600 s) stands in where a test leaves its duration at 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTestSpec
from glimmer.contract.kinds import burst_only
from glimmer.contract.vocab import Scope
from glimmer.plan.resolve import plan_tests
from glimmer.plan.units import scope_of

DEFAULT_DURATION_SECONDS = 600


@dataclass(frozen=True)
class PlannedLine:
    name: str
    kind: str
    scope: Scope
    duration_seconds: int
    segments: int  # 0 when the test is not a segmented soak
    repeats: int
    gates: int
    required: bool


def execution_seconds(spec: BurnInTestSpec) -> int:
    """How long one execution of ``spec`` is budgeted to run (the whole soak if segmented)."""
    return spec.duration_seconds or DEFAULT_DURATION_SECONDS


def summarize_profile(
    profile: BurnInProfile, tests: Mapping[str, BurnInTestSpec]
) -> list[PlannedLine]:
    """One line per planned test of ``profile``, variants expanded."""
    lines: list[PlannedLine] = []
    for planned in plan_tests(profile, tests):
        spec = planned.spec
        segments = 0
        if spec.soak is not None:
            segment = spec.soak.segment_seconds
            segments = -(-execution_seconds(spec) // segment) if segment > 0 else 0
        lines.append(
            PlannedLine(
                name=planned.name,
                kind=spec.kind,
                scope=scope_of(spec),
                duration_seconds=0 if burst_only(spec.kind) else execution_seconds(spec),
                segments=segments,
                repeats=spec.repeat_count,
                gates=len(spec.thresholds or ()),
                required=planned.required,
            )
        )
    return lines


def unit_seconds(lines: list[PlannedLine]) -> int:
    """Budgeted seconds one unit spends in the profile: repeats run back to back."""
    return sum(line.duration_seconds * line.repeats for line in lines)
