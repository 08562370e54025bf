"""The soak engine's configuration (§9.3, shared by thermal-soak and gpu-burn): duration and
its floor, the warm-up, N, the sampling and progress intervals (clamped with a note, as §9
says), the self-test injection, and the test-only time scale."""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.runners.nvml_sampler import time_scale
from glimmer.runners.settings import Settings

SAMPLE_INTERVAL = "BURNIN_SOAK_SAMPLE_INTERVAL_MS"
PROGRESS_INTERVAL = "BURNIN_SOAK_PROGRESS_INTERVAL_S"
MATRIX_N = "BURNIN_SOAK_MATRIX_N"
INJECT = "BURNIN_SOAK_INJECT_MISCOMPARES"
DEFAULT_DURATION_S = 900
MIN_DURATION_S = 15
MIN_N = 512


@dataclass(frozen=True)
class SoakConfig:
    requested_s: int
    duration_s: int
    warmup_s: float
    matrix_n: int
    inject: int
    sample_interval_ms: int
    progress_interval_s: int
    scale: float
    warnings: tuple[str, ...] = ()


def _clamped(settings: Settings, name: str, default: int, low: int, high: int) -> tuple[int, str]:
    value = settings.integer(name, default)
    if low <= value <= high:
        return value, ""
    clamped = min(max(value, low), high)
    return clamped, f"{name} {value} clamped to {clamped}"


def read_config(settings: Settings) -> SoakConfig:
    warnings: list[str] = []
    requested = settings.duration(DEFAULT_DURATION_S)
    duration = max(requested, MIN_DURATION_S)
    if duration != requested:
        warnings.append(f"duration {requested} s raised to the {MIN_DURATION_S} s floor")
    interval, note = _clamped(settings, SAMPLE_INTERVAL, 250, 10, 5000)
    warnings.append(note)
    progress, note = _clamped(settings, PROGRESS_INTERVAL, 15, 5, 3600)
    warnings.append(note)
    n = settings.integer(MATRIX_N, 8192, minimum=1)
    if n < MIN_N:
        warnings.append(f"{MATRIX_N} {n} raised to {MIN_N}")
        n = MIN_N
    inject = settings.integer(INJECT, 0, minimum=0)
    warmup = min(max(duration / 10.0, 5.0), 30.0)
    return SoakConfig(
        requested, duration, warmup, n, inject, interval, progress, time_scale(settings),
        tuple(w for w in warnings if w),
    )  # fmt: skip
