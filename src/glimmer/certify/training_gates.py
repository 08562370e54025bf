"""The gates a training job is held to and the verdict on what it measured (specs/certify.md
§6.3, §7.5), as pure functions.

A category's own threshold for a key wins; every key it leaves out that has a glimmer default is
still gated: goodput by :data:`GOODPUT_MIN`, and throughput per GPU by the floor of the group's
GPU product (:func:`training_tflops_floor`), so a slow GPU fails its job even when only goodput
was asked about. A group whose product has no sourced figure gets no default throughput gate:
its category's thresholds are all it can be judged by.

The verdict names the gate that decided it (the first violated key, else goodput), with the
figure it read and the floor it held it to, so the report shows what the verdict used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from glimmer.certify.measure.expect import GOODPUT_MIN, training_tflops_floor
from glimmer.certify.measure.threshold import ThresholdError, holds

GOODPUT, TFLOPS, STEP_TIME = "goodputRatio", "avgTFLOPsPerGPU", "avgStepTimeSec"


@dataclass(frozen=True)
class Gate:
    """One threshold: its key and expression; ``floor`` is set for a glimmer default
    (``value >= floor``), None for an expression the certification wrote."""

    key: str
    expression: str
    floor: float | None = None
    source: str = ""


@dataclass(frozen=True)
class Verdict:
    """Whether a job passed, the gate that decided it and the figure that gate read."""

    passed: bool
    gate: Gate | None
    measured: float | None
    reason: str = ""


def _floor_gate(key: str, value: float, source: str) -> Gate:
    return Gate(key, f"value >= {value:g}", value, source)


def training_gates(thresholds: Mapping[str, str], products: Iterable[str]) -> list[Gate]:
    """The gates of a job on GPUs of ``products`` (gpu.product labels), sorted by key."""
    gates = {k: Gate(k, e, source="certification threshold") for k, e in thresholds.items()}
    if GOODPUT not in gates:
        gates[GOODPUT] = _floor_gate(GOODPUT, GOODPUT_MIN.value, GOODPUT_MIN.source)
    floors = [training_tflops_floor(p) for p in sorted(set(products))]
    if TFLOPS not in gates and floors and all(f is not None for f in floors):
        least = min((f for f in floors if f is not None), key=lambda f: f.value)
        gates[TFLOPS] = _floor_gate(TFLOPS, least.value, least.source)
    return [gates[k] for k in sorted(gates)]


def judge(gates: Iterable[Gate], measured: Mapping[str, float]) -> Verdict:
    """The first gate (by key) whose figure fails it, else a pass shown by goodput (or the
    first gate when goodput is not gated). A gate on a figure the job never measured fails
    closed, as does an expression that cannot be evaluated."""
    ordered = sorted(gates, key=lambda g: g.key)
    for g in ordered:
        value = measured.get(g.key)
        if value is None:
            return Verdict(False, g, None, f'Threshold "{g.key}" has no measured value')
        try:
            ok = holds(g.expression, value)
        except ThresholdError as e:
            return Verdict(False, g, value, f"threshold {g.key} is invalid: {e}")
        if not ok:
            why = f'Threshold "{g.key}" violated: measured {value:.4f}, expression: {g.expression}'
            return Verdict(False, g, value, why)
    shown = next((g for g in ordered if g.key == GOODPUT), ordered[0] if ordered else None)
    return Verdict(True, shown, measured.get(shown.key) if shown else None)
