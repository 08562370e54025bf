"""The GoodputMeasurement status from a training log (§2.6, §6.2, §6.3), as pure functions.

:func:`glimmer.certify.measure.goodput.parse_training` folds a log into the goodput figures;
:func:`marks` reads what the Job controller's stall and restart rules need beside them (the
last step and its time, the latest application start, the last completed checkpoint), and
:func:`goodput_status` writes all of it the way the kind stores it (every float a decimal
string, formatted the same way every time, so a recompute from the same log is byte-identical).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from glimmer.certify.measure.bandwidth import strip_kubelet_timestamp
from glimmer.certify.measure.goodput import Goodput, TrainingProfile, parse_time

_KUBELET = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) ")


def decimal(value: float) -> str:
    """A float as the measurement kinds store it."""
    return f"{value:.6f}"


def stamp(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Marks:
    """Where the training stands in its log."""

    current_step: int | None = None
    last_step_time: datetime | None = None
    application_start: datetime | None = None
    last_checkpoint_step: int | None = None
    last_checkpoint_time: datetime | None = None
    last_line_time: datetime | None = None


def _when(m: re.Match[str], kubelet: datetime | None) -> datetime | None:
    if "timestamp" in m.groupdict() and m.group("timestamp"):
        return parse_time(m.group("timestamp")) or kubelet
    return kubelet


def marks(text: str, profile: TrainingProfile) -> Marks:
    pats = profile.compiled()
    step = start = cp_step = None
    step_t = cp_t = last_t = None
    for raw in text.splitlines():
        km = _KUBELET.match(raw)
        kt = parse_time(km.group(1)) if km else None
        last_t = kt or last_t
        line = strip_kubelet_timestamp(raw)
        for name in ("applicationStart", "checkpointDone", "trainingStep"):
            got = pats.get(name)
            hit = got[0].search(line) if got else None
            if hit is None:
                continue
            t = _when(hit, kt)
            if name == "applicationStart":
                start = t or start
            elif name == "checkpointDone":
                cp_step, cp_t = int(hit.group("step")), t
            else:
                step, step_t = int(hit.group("iteration")), t or step_t
            break
    return Marks(step, step_t, start, cp_step, cp_t, last_t)


def goodput_status(
    status: Mapping[str, Any], figures: Goodput | None, seen: Marks, log_interval: int
) -> dict[str, Any]:
    """``status`` with the figures and marks of the log so far (conditions and times kept)."""
    out: dict[str, Any] = dict(status)
    if figures is not None:
        out.update(
            {
                "result": decimal(figures.ratio),
                "highestStep": figures.highest_step,
                "trainingTimeSec": decimal(figures.training_time),
                "lostWorkTimeSec": decimal(figures.lost_work),
                "rescheduleTimeSec": decimal(figures.reschedule),
                "resumeTimeSec": decimal(figures.resume),
                "checkpointSaveTimeSec": decimal(figures.checkpoint_save),
                "interruptionCount": figures.interruptions,
            }
        )
        if figures.avg_step_time is not None:
            out["avgStepTimeSec"] = decimal(figures.avg_step_time)
        if figures.avg_tflops_per_gpu is not None:
            out["avgTFLOPSPerGPU"] = decimal(figures.avg_tflops_per_gpu)
    out["logInterval"] = log_interval
    for key, value in (
        ("currentStep", seen.current_step),
        ("lastCheckpointStep", seen.last_checkpoint_step),
    ):
        if value is not None:
            out[key] = value
    for key, at in (
        ("lastStepTimestamp", seen.last_step_time),
        ("applicationStartTime", seen.application_start),
        ("lastCheckpointTime", seen.last_checkpoint_time),
    ):
        if at is not None:
            out[key] = stamp(at)
    return out


# §2.8's well-known captures as the parser reads them: a LogProfile may name a step
# ``globalStep`` (the built-in megatron-training does) or ``iteration``/``step``, and a step's
# duration ``stepTiming`` or ``elapsedTime``; parse_training reads ``iteration`` on steps,
# ``step`` on checkpoint events and ``elapsedTime``.
_STEP_NAME = {"trainingStep": "iteration"}
_CHECKPOINT_EVENTS = ("checkpointSave", "checkpointDone", "checkpointRestore", "checkpointLoaded")


def _renamed(regex: str, old: str, new: str) -> str:
    return regex.replace(f"(?P<{old}>", f"(?P<{new}>") if f"(?P<{new}>" not in regex else regex


def parser_profile(profile: TrainingProfile) -> TrainingProfile:
    """``profile`` with its captures under the names the goodput parser reads."""
    patterns = {}
    for name, p in profile.patterns.items():
        regex, units = p.regex, dict(p.units)
        if name == "trainingStep":
            regex = _renamed(_renamed(regex, "globalStep", "iteration"), "step", "iteration")
            regex = _renamed(regex, "stepTiming", "elapsedTime")
            if "stepTiming" in units:
                units.setdefault("elapsedTime", units.pop("stepTiming"))
        elif name in _CHECKPOINT_EVENTS:
            regex = _renamed(_renamed(regex, "globalStep", "step"), "iteration", "step")
        patterns[name] = replace(p, regex=regex, units=units)
    return replace(profile, patterns=patterns)
