"""The goodput half of a LogProfile (specs/certify.md §2.8, §6.2): event regexes, the captures
they name, units, warmup steps and the log interval.

A LogProfile names a step ``iteration``, ``globalStep`` or ``step`` and a step's duration
``elapsedTime`` or ``stepTiming`` (§2.8's well-known captures): the tables below say which
names each event is read by, so a profile written for any framework is read as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from glimmer.api.certify.logprofile import LogProfile
from glimmer.certify.measure.goodput_layout import go_time, layout_regex
from glimmer.errors import InputError, Location

_FRACTION = re.compile(r"\.(\d+)")
_UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}

# Where an event's step number is captured, in the order tried. A step names it as the
# framework prints its progress; a checkpoint event as the checkpoint it writes or reads.
STEP_CAPTURES = ("iteration", "globalStep", "step")
CHECKPOINT_STEP_CAPTURES = ("step", "globalStep", "iteration")
DURATION_CAPTURES = ("elapsedTime", "stepTiming")
SAVE_DURATION = "saveDuration"


def parse_time(text: str) -> datetime | None:
    """An ISO-like timestamp (``T`` or space, any fraction length, ``Z``/offset/none as UTC)."""
    m = _FRACTION.search(text)
    if m:  # Python reads at most microseconds: nanosecond stamps are cut, not refused
        text = text[: m.start()] + "." + (m.group(1) + "000000")[:6] + text[m.end() :]
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def to_seconds(value: float, unit: str | None) -> float:
    """``value`` in seconds; a unit the table does not know leaves it unchanged (§6.2)."""
    return value * _UNIT_SECONDS.get(unit or "s", 1.0)


def captured_number(m: re.Match[str], names: tuple[str, ...]) -> float | None:
    """The first of ``names`` the match captured, as a number (None when none parses)."""
    groups = m.groupdict()
    for name in names:
        text = groups.get(name)
        if text:
            try:
                return float(text)
            except ValueError:
                return None
    return None


@dataclass(frozen=True)
class EventPattern:
    regex: str
    example: str = ""
    units: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainingProfile:
    """The goodput half of a LogProfile: its patterns, warmup steps, log interval and the Go
    layout its ``timestamp`` captures are written in (empty: any ISO-like time)."""

    patterns: Mapping[str, EventPattern]
    warmup_steps: int = 0
    log_interval: int = 1
    layout: str = ""

    def time(self, text: str, layout: re.Pattern[str] | None = None) -> datetime | None:
        """A captured ``timestamp``: by the layout (``layout``: its regex, compiled once by the
        caller), else read as an ISO-like time."""
        by_layout = go_time(text, layout or self.layout) if self.layout else None
        return by_layout or parse_time(text)

    def compiled(self) -> dict[str, tuple[re.Pattern[str], Mapping[str, str]]]:
        """Each pattern compiled; a bad regex or an example it does not match is an error, and
        so is a layout that names a part twice."""
        if self.layout:
            try:
                layout_regex(self.layout)
            except re.error as e:
                where = Location(field="spec.timestamp.layout")
                raise InputError(f"layout {self.layout!r} cannot be read: {e}", where) from None
        out: dict[str, tuple[re.Pattern[str], Mapping[str, str]]] = {}
        for name, p in self.patterns.items():
            where = Location(field=f"spec.patterns.{name}")
            try:
                rx = re.compile(p.regex)
            except re.error as e:
                raise InputError(f"regex does not compile: {e}", where) from None
            if p.example and not rx.search(p.example):
                raise InputError("example does not match the regex", where)
            out[name] = (rx, p.units)
        return out


_TS = r"(?P<timestamp>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+)"
# The Megatron profile of §6.2 (``megatron-training``), patterns carried over.
MEGATRON = TrainingProfile(
    {
        "trainingStep": EventPattern(
            rf"\[{_TS}\]\s+iteration\s+(?P<iteration>\d+)/\s*\d+\s*\|.*elapsed time per "
            r"iteration \(ms\):\s*(?P<elapsedTime>[\d.]+)\s*\|.*throughput per GPU "
            r"\(TFLOP/s/GPU\):\s*(?P<tflops>[\d.]+)\s*\|.*lm loss:\s*(?P<loss>[\d.eE+\-]+)",
            units={"elapsedTime": "ms"},
        ),
        "checkpointSave": EventPattern(
            rf"\[{_TS}\]\s+saving checkpoint at iteration\s+(?P<step>\d+)\s+to\s+(?P<path>\S+)"
        ),
        "checkpointDone": EventPattern(
            rf"\[{_TS}\]\s+successfully saved checkpoint from iteration\s+(?P<step>\d+)\s+to\s+"
            r"(?P<path>\S+)"
        ),
        "applicationStart": EventPattern(
            r"\[before the start of training step\]\s+datetime:\s+"
            r"(?P<timestamp>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+)"
        ),
        "checkpointLoaded": EventPattern(
            r"successfully loaded checkpoint from\s+(?P<path>\S+).*at iteration\s+(?P<step>\d+)"
        ),
        "warmupStep": EventPattern(r"is warmup iteration"),
    },
    warmup_steps=2,
)


# LogProfile pattern fields by the names the recipe uses (§2.8).
_PATTERN_NAMES = {
    "training_step": "trainingStep",
    "checkpoint_save": "checkpointSave",
    "checkpoint_done": "checkpointDone",
    "checkpoint_restore": "checkpointRestore",
    "checkpoint_loaded": "checkpointLoaded",
    "application_start": "applicationStart",
    "warmup_step": "warmupStep",
}


def training_profile(profile: LogProfile) -> TrainingProfile:
    """The goodput half of a loaded LogProfile."""
    pats = profile.spec.patterns
    found = {
        name: EventPattern(p.regex, p.example or "", dict(p.units or {}))
        for field_name, name in _PATTERN_NAMES.items()
        if (p := getattr(pats, field_name)) is not None
    }
    return TrainingProfile(
        found,
        profile.spec.warmup_steps or 0,
        profile.spec.log_interval or 1,
        profile.spec.timestamp.layout,
    )
