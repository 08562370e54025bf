"""Goodput (specs/certify.md §6.2-6.3; §9.2 scenarios 27-28)."""

from __future__ import annotations

import json
from datetime import UTC

import pytest
from hypothesis import given
from hypothesis import strategies as st

import glimmer.api.certify.kinds  # noqa: F401  (registers LogProfile with the loader)
from glimmer.api.certify.logprofile import LogProfile
from glimmer.api.load import load_text
from glimmer.certify.measure.goodput import (
    MEGATRON,
    EventPattern,
    TrainingProfile,
    goodput,
    parse_time,
    parse_training,
    training_profile,
)
from glimmer.errors import InputError


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((14400, 70, 900, 150, 45), 0.928772),  # the golden one-interruption case
        ((3600, 0, 0, 0, 0), 1.0),  # perfect
        ((3600, 0, 0, 0, 360), 0.9),  # checkpoint overhead only
        ((3600, 0, 0, 3600, 0), 0.0),  # all rescheduling: denominator 0
        ((0, 0, 0, 0, 0), 0.0),  # zero training time
        ((100, 50, 60, 0, 0), 0.0),  # negative numerator
    ],
)
def test_goodput_formula(args: tuple[float, ...], expected: float) -> None:
    assert goodput(*args) == pytest.approx(expected, abs=1e-6)


def _step(ts: str, i: int, ms: float, tflops: float = 400.0) -> str:
    return (
        f"{ts}Z [2026-03-14 {ts[11:]}] iteration {i:>8}/     100 | consumed samples: {i * 64} | "
        f"elapsed time per iteration (ms): {ms:.1f} | throughput per GPU (TFLOP/s/GPU): "
        f"{tflops:.1f} | learning rate: 1.0E-04 | global batch size: 64 | lm loss: 8.5E+00 |"
    )


LOG = "\n".join(
    [
        "2026-03-14T10:00:00.000000Z [before the start of training step] datetime: "
        "2026-03-14 10:00:00.000000",
        _step("2026-03-14T10:00:10.000000", 1, 9000.0, 100.0),  # warmup
        _step("2026-03-14T10:00:12.000000", 2, 2000.0, 300.0),  # warmup
        _step("2026-03-14T10:00:13.000000", 3, 1000.0),
        _step("2026-03-14T10:00:14.000000", 4, 1000.0),
        "2026-03-14T10:00:14.100000Z NCCL INFO Channel 00/32 : 0 1 2 3",
        "2026-03-14T10:00:15.000000Z [2026-03-14 10:00:15.000000] saving checkpoint at "
        "iteration        4 to /ckpt/iter_4",
        "2026-03-14T10:00:20.000000Z [2026-03-14 10:00:20.000000] successfully saved "
        "checkpoint from iteration        4 to /ckpt/iter_4",
        _step("2026-03-14T10:00:21.000000", 5, 1000.0),
        _step("2026-03-14T10:00:30.000000", 6, 1000.0),  # last line before the crash
        "2026-03-14T10:01:00.000000Z [before the start of training step] datetime: "
        "2026-03-14 10:01:00.000000",
        "2026-03-14T10:01:05.000000Z  successfully loaded checkpoint from /ckpt [ t 1/1, p 1/1 ] "
        "at iteration 4",
        _step("2026-03-14T10:01:10.000000", 5, 5000.0),  # warmup after restore
        _step("2026-03-14T10:01:12.000000", 6, 2000.0),
        _step("2026-03-14T10:01:13.000000", 7, 1000.0),
        _step("2026-03-14T10:01:14.000000", 8, 1000.0),
    ]
)


def test_one_interruption_splits_into_lost_work_rescheduling_and_resume() -> None:
    g = parse_training(LOG)
    assert g is not None
    assert g.interruptions == 1 and g.highest_step == 8
    assert g.training_time == pytest.approx(74.0)
    assert g.checkpoint_save == pytest.approx(5.0)
    assert g.lost_work == pytest.approx(10.0)  # 10:00:20 checkpoint -> 10:00:30 last line
    assert g.reschedule == pytest.approx(30.0)  # -> 10:01:00 restart
    assert g.resume == pytest.approx(10.0)  # -> 10:01:10 first step
    assert g.ratio == pytest.approx(goodput(74, 10, 10, 30, 5))
    assert g.avg_step_time == pytest.approx(1.0)  # warmup excluded, ms -> s
    assert g.avg_tflops_per_gpu == pytest.approx(400.0)


def test_no_steps_is_no_measurement() -> None:
    assert parse_training("NCCL INFO only\n") is None


def test_example_mismatch_and_invalid_regex_are_refused() -> None:
    bad = TrainingProfile({"trainingStep": EventPattern(r"iteration (\d+)", example="nope")})
    with pytest.raises(InputError, match="example does not match"):
        parse_training("", bad)
    with pytest.raises(InputError, match="does not compile"):
        parse_training("", TrainingProfile({"trainingStep": EventPattern("(")}))


@pytest.mark.parametrize(
    "text",
    [
        "2026-03-14T10:00:00Z",
        "2026-03-14T10:00:00.123456Z",
        "2026-03-14T10:00:00.123456789Z",
        "2026-03-14 10:00:00.5",
        "2026-03-14T03:00:00-07:00",
    ],
)
def test_timestamps_of_any_precision(text: str) -> None:
    t = parse_time(text)
    assert t is not None and t.astimezone(UTC).hour == 10


@given(st.text())
def test_training_parser_never_raises_on_arbitrary_text(text: str) -> None:
    parse_training(text, MEGATRON)


def test_a_loaded_log_profile_measures_like_the_builtin() -> None:
    pats = "".join(
        f"    {name}:\n      regex: {json.dumps(p.regex)}\n"
        + (f"      units: {json.dumps(dict(p.units))}\n" if p.units else "")
        for name, p in MEGATRON.patterns.items()
    )
    text = (
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: LogProfile\n"
        "metadata: {name: megatron-training}\nspec:\n"
        "  timestamp: {layout: '2006-01-02 15:04:05.999999'}\n"
        f"  patterns:\n{pats}  warmupSteps: 2\n"
    )
    (item,) = load_text(text, "lp.yaml")
    assert isinstance(item.obj, LogProfile)
    assert parse_training(LOG, training_profile(item.obj)) == parse_training(LOG)
