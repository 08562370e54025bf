"""Goodput from training logs (specs/certify.md §6.2–6.3).

A LogProfile names regexes for the events of a training run — steps, checkpoint save and done,
application start, checkpoint loaded — with units for durations. :func:`parse_training` folds a
finished run's log (every attempt, kubelet timestamps on) into the GoodputMeasurement figures;
:func:`goodput` is the formula.

Attempts are told apart by ``applicationStart``: each one after the first is an interruption.
Its cost splits into lost work (from the last completed checkpoint to the last line of the
failed attempt), rescheduling (to the new attempt's start) and resume (to its first step).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from glimmer.api.certify.logprofile import LogProfile
from glimmer.certify.measure.bandwidth import strip_kubelet_timestamp
from glimmer.errors import InputError, Location

_KUBELET = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) ")
_FRACTION = re.compile(r"\.(\d+)")
_UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def goodput(t_w: float, t_rm: float, t_ch: float, t_re: float, t_save: float) -> float:
    """(t_w − (t_rm + t_ch) − t_re − t_save) / (t_w − t_re); 0 when the denominator is not
    positive or the numerator is negative (§6.3)."""
    den = t_w - t_re
    num = t_w - (t_rm + t_ch) - t_re - t_save
    if den <= 0 or num < 0:
        return 0.0
    return num / den


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


@dataclass(frozen=True)
class EventPattern:
    regex: str
    example: str = ""
    units: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TrainingProfile:
    """The goodput half of a LogProfile: its patterns, warmup steps and log interval."""

    patterns: Mapping[str, EventPattern]
    warmup_steps: int = 0
    log_interval: int = 1

    def compiled(self) -> dict[str, tuple[re.Pattern[str], Mapping[str, str]]]:
        """Each pattern compiled; a bad regex or an example it does not match is an error."""
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
    return TrainingProfile(found, profile.spec.warmup_steps or 0, profile.spec.log_interval or 1)


@dataclass(frozen=True)
class Goodput:
    """The GoodputMeasurement figures of one finished run (times in seconds)."""

    ratio: float
    training_time: float  # t_w
    lost_work: float  # Σ t_ch
    reschedule: float  # Σ t_re
    resume: float  # Σ t_rm
    checkpoint_save: float  # Σ t_save
    interruptions: int
    highest_step: int
    avg_step_time: float | None  # warmup excluded
    avg_tflops_per_gpu: float | None


@dataclass
class _Attempt:
    start: float
    last_line: float
    first_step: float | None = None
    last_checkpoint: float | None = None
    steps: list[tuple[int, float, float | None, float | None]] = field(default_factory=list)


def _seconds(value: str, unit: str) -> float:
    return float(value) * _UNIT_SECONDS.get(unit, 1.0)


def parse_training(text: str, profile: TrainingProfile = MEGATRON) -> Goodput | None:
    """Fold a finished run's log into goodput; None when no training step was seen."""
    pats = profile.compiled()
    attempts: list[_Attempt] = []
    saves: dict[int, float] = {}
    t_save = 0.0
    since_boundary = 0
    for raw in text.splitlines():
        km = _KUBELET.match(raw)
        stamp = parse_time(km.group(1)) if km else None
        line = strip_kubelet_timestamp(raw)
        kt = stamp.timestamp() if stamp else None

        def when(m: re.Match[str], kt: float | None = kt) -> float | None:
            if "timestamp" in m.groupdict() and m.group("timestamp"):
                t = parse_time(m.group("timestamp"))
                return t.timestamp() if t else kt
            return kt

        hit = _match(pats, "applicationStart", line)
        if hit:
            t = when(hit)
            if t is not None:
                attempts.append(_Attempt(t, t))
                since_boundary = 0
            continue
        if not attempts:
            continue
        if kt is not None:  # the interruption time is the attempt's last log line (§6.2)
            attempts[-1].last_line = kt
        cur = attempts[-1]
        if _match(pats, "checkpointRestore", line) or _match(pats, "checkpointLoaded", line):
            since_boundary = 0  # a restore is a run boundary: warmup counts again (§6.2)
            continue
        if hit := _match(pats, "checkpointSave", line):
            t = when(hit)
            if t is not None:
                saves[int(hit.group("step"))] = t
            continue
        if hit := _match(pats, "checkpointDone", line):
            t = when(hit)
            began = saves.pop(int(hit.group("step")), None)
            if t is not None:
                cur.last_checkpoint = t
                if began is not None:
                    t_save += max(0.0, t - began)
            continue
        if hit := _match(pats, "trainingStep", line):
            step = int(hit.group("iteration"))
            if profile.log_interval > 1 and step % profile.log_interval:
                continue
            t = when(hit)
            if t is None:
                continue
            units = pats["trainingStep"][1]
            gd = hit.groupdict()
            elapsed = (
                _seconds(gd["elapsedTime"], units.get("elapsedTime", "s"))
                if gd.get("elapsedTime")
                else None
            )
            tflops = float(gd["tflops"]) if gd.get("tflops") else None
            warm = since_boundary < profile.warmup_steps or bool(
                "warmupStep" in pats and pats["warmupStep"][0].search(line)
            )
            since_boundary += 1
            if cur.first_step is None:
                cur.first_step = t
            cur.steps.append((step, t, None if warm else elapsed, None if warm else tflops))
    return _fold(attempts, t_save)


def _match(
    pats: Mapping[str, tuple[re.Pattern[str], Mapping[str, str]]], name: str, line: str
) -> re.Match[str] | None:
    got = pats.get(name)
    return got[0].search(line) if got else None


def _fold(attempts: list[_Attempt], t_save: float) -> Goodput | None:
    steps = [s for a in attempts for s in a.steps]
    if not steps:
        return None
    t_ch = t_re = t_rm = 0.0
    for prev, nxt in itertools.pairwise(attempts):
        interrupt = prev.last_line
        t_ch += max(0.0, interrupt - (prev.last_checkpoint or prev.start))
        t_re += max(0.0, nxt.start - interrupt)
        t_rm += max(0.0, (nxt.first_step or nxt.start) - nxt.start)
    t_w = attempts[-1].last_line - attempts[0].start
    times = [s[2] for s in steps if s[2] is not None]
    flops = [s[3] for s in steps if s[3] is not None]
    return Goodput(
        ratio=goodput(t_w, t_rm, t_ch, t_re, t_save),
        training_time=t_w,
        lost_work=t_ch,
        reschedule=t_re,
        resume=t_rm,
        checkpoint_save=t_save,
        interruptions=len(attempts) - 1,
        highest_step=max(s[0] for s in steps),
        avg_step_time=sum(times) / len(times) if times else None,
        avg_tflops_per_gpu=sum(flops) / len(flops) if flops else None,
    )
