"""The GoodputMeasurement status from the incremental training-log reader (§2.6, §6.2, §6.3),
as pure functions.

:func:`goodput_status` writes the reader's figures and progress the way the kind stores them
(every float a decimal string, formatted the same way every time, so the same state gives a
byte-identical status) beside ``readerState``, the reader's exact state the next sample resumes
from (:meth:`~glimmer.certify.measure.goodput_reader.TrainingLogReader.state`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from glimmer.certify.measure.goodput import Goodput, Progress, TrainingProfile
from glimmer.operator.certify.job_status import stamp


def decimal(value: float) -> str:
    """A float as the measurement kinds store it."""
    return f"{value:.6f}"


def _stamp(epoch: float) -> str:
    return stamp(datetime.fromtimestamp(epoch, UTC))


# The fields a sample derives from the reader's state: rewritten (or dropped) every time.
DERIVED = (
    "result", "highestStep", "trainingTimeSec", "lostWorkTimeSec", "rescheduleTimeSec",
    "resumeTimeSec", "checkpointSaveTimeSec", "interruptionCount", "avgStepTimeSec",
    "avgTFLOPSPerGPU", "currentStep", "lastCheckpointStep", "lastStepTimestamp",
    "applicationStartTime", "lastCheckpointTime", "applicationStopTime", "warmupBaseStep",
    "warmupTimeSec", "nonWarmupTimeSec",
)  # fmt: skip


def goodput_status(
    status: Mapping[str, Any],
    figures: Goodput | None,
    seen: Progress,
    log_interval: int,
    state: Mapping[str, Any],
) -> dict[str, Any]:
    """``status`` with the figures and progress of the log read so far, and the reader's
    ``state`` (conditions, times and cursors kept)."""
    out: dict[str, Any] = {k: v for k, v in status.items() if k not in DERIVED}
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
        out["warmupTimeSec"] = decimal(seen.warmup_time)
        out["nonWarmupTimeSec"] = decimal(seen.non_warmup_time)
    out["logInterval"] = log_interval
    for key, value in (
        ("currentStep", seen.current_step),
        ("lastCheckpointStep", seen.last_checkpoint_step),
        ("warmupBaseStep", seen.warmup_base_step),
    ):
        if value is not None:
            out[key] = value
    for key, at in (
        ("lastStepTimestamp", seen.last_step_time),
        ("applicationStartTime", seen.application_start),
        ("lastCheckpointTime", seen.last_checkpoint_time),
        ("applicationStopTime", seen.last_line_time),
    ):
        if at is not None:
            out[key] = _stamp(at)
    out["readerState"] = dict(state)
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
