"""The detectors the fault-coverage sweep checks, read from the mode table.

``MODES`` (glimmer.sim.modes) holds, per fault mode, the detectors the sweep confirmed: the ones
the table first expected, those the sweep found on top (``Detector.why`` says why they see the
fault), the scope a detector holds at, the detectors the runners refuted (``FaultMode.refuted``,
with why) and why a mode lies outside the built-in profiles. The corrections are data on the
modes, so the product's table is the corrected one; this module only lists them in the shape
the sweep and docs/fault-coverage.md use.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.sim.modes import MODES, FaultMode


@dataclass(frozen=True)
class CoverageDetector:
    kind: str
    metric: str | None  # None: the fault shows as the kind's outcome (Fail or Error)
    scope: str | None = None  # the scope the detector needs (None: any)
    note: str = ""


@dataclass(frozen=True)
class Edit:
    mode: str
    detector: CoverageDetector
    reason: str


def detectors(mode: FaultMode) -> tuple[CoverageDetector, ...]:
    """The detectors of one mode, in the table's order."""
    return tuple(CoverageDetector(d.kind, d.metric, d.scope, d.note) for d in mode.detectors)


# Detectors of the mode table the runners refuted, with why.
REMOVED: tuple[Edit, ...] = tuple(
    Edit(m.name, CoverageDetector(r.detector.kind, r.detector.metric), r.why)
    for m in MODES
    for r in m.refuted
)

# Detectors the sweep found beyond what the table first expected, with why they see the fault.
ADDED: tuple[Edit, ...] = tuple(
    Edit(m.name, CoverageDetector(d.kind, d.metric, d.scope, d.note), d.why)
    for m in MODES
    for d in m.detectors
    if d.why
)

# Modes whose detectors all lie outside what the built-in profiles run or gate: why, so the
# coverage document says it instead of the sweep failing.
OUTSIDE_BUILTINS: dict[str, str] = {m.name: m.outside_builtins for m in MODES if m.outside_builtins}
