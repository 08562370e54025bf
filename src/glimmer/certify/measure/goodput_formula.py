"""The goodput formula and the figures of one run (specs/certify.md §6.3, §2.6)."""

from __future__ import annotations

from dataclasses import dataclass


def goodput(t_w: float, t_rm: float, t_ch: float, t_re: float, t_save: float) -> float:
    """(t_w − (t_rm + t_ch) − t_re − t_save) / (t_w − t_re); 0 when the denominator is not
    positive or the numerator is negative (§6.3)."""
    den = t_w - t_re
    num = t_w - (t_rm + t_ch) - t_re - t_save
    if den <= 0 or num < 0:
        return 0.0
    return num / den


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
