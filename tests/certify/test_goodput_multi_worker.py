"""Goodput from two workers' logs (specs/certify.md §2.8 ``workerStrategy``, §6.2; §9.2 scenario
28 "multi-worker pending save propagated"): Megatron's rank 0 prints the lifecycle, its last rank
the iterations."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glimmer.api.certify.logprofile import WorkerStrategy
from glimmer.certify.measure.goodput import (
    LIFECYCLE,
    STEPS,
    WorkerLogReader,
    parse_training,
    parse_workers,
    pick_workers,
)
from tests.certify.test_goodput_log_formats import N6_LOG


def _strategy(**kw: object) -> WorkerStrategy:
    return WorkerStrategy.model_validate(kw)


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (None, ("w0", "w0")),
        (_strategy(type="Single"), ("w0", "w0")),
        (_strategy(type="Single", lifecyclePod="last", trainingStepPod="first"), ("w2", "w2")),
        (_strategy(type="Multi", lifecyclePod="first", trainingStepPod="last"), ("w0", "w2")),
        (_strategy(type="Multi", lifecyclePod="last"), ("w2", "w2")),  # steps: lifecycle's pod
    ],
    ids=["none", "single", "single-last", "multi", "multi-default"],
)
def test_the_strategy_picks_the_lifecycle_and_training_step_pods(
    strategy: WorkerStrategy | None, expected: tuple[str, str]
) -> None:
    assert pick_workers(["w0", "w1", "w2"], strategy) == expected
    assert pick_workers([], strategy) is None


def _split(log: str) -> tuple[str, str]:
    """N6's log as rank 0 and the last rank print it: iterations on the last rank only, the
    start line on both (every rank prints it; the steps pod's copy must not count)."""
    lifecycle, steps = [], []
    for line in log.split("\n"):
        if "] iteration " in line:
            steps.append(line)
        else:
            lifecycle.append(line)
            if "before the start" in line:
                steps.append(line)
    return "\n".join(lifecycle), "\n".join(steps)


def test_two_workers_merged_measure_what_one_log_of_both_does() -> None:
    lifecycle, steps = _split(N6_LOG)
    merged = parse_workers(lifecycle, steps)
    assert merged is not None and merged.interruptions == 1
    assert merged == parse_training(N6_LOG)


def _stamp(s: int) -> str:
    return f"2026-03-14T10:00:{s:02d}.000000Z [2026-03-14 10:00:{s:02d}.000000]"


def _iteration(s: int, i: int) -> str:
    return (
        f"{_stamp(s)} iteration {i:>8}/     100 | consumed samples: {i * 64} | elapsed time per "
        "iteration (ms): 1000.0 | throughput per GPU (TFLOP/s/GPU): 400.0 | lm loss: 9.0E+00 |"
    )


def _read_at(s: int) -> float:
    return datetime(2026, 3, 14, 10, 0, s, tzinfo=UTC).timestamp()


def test_a_save_pending_on_the_lifecycle_pod_spans_the_other_pods_steps_and_reads() -> None:
    # Each sample reads both pods up to the same moment (``read_at``), lifecycle pod first.
    reader = WorkerLogReader()
    start = "2026-03-14T10:00:00.000000Z [before the start of training step] datetime: "
    reader.feed(LIFECYCLE, start + "2026-03-14 10:00:00.000000\n", read_at=_read_at(1))
    reader.feed(STEPS, _iteration(1, 1) + "\n", read_at=_read_at(1))
    save = f"{_stamp(5)} saving checkpoint at iteration 5 to /ckpt/iter_5\n"
    reader.feed(LIFECYCLE, save, read_at=_read_at(6))
    reader.feed(STEPS, "\n".join(_iteration(s, s) for s in range(2, 7)) + "\n", read_at=_read_at(6))
    # The next sample: the save is still pending while the last rank goes on stepping.
    reader.feed(LIFECYCLE, "", read_at=_read_at(8))
    reader.feed(STEPS, "\n".join(_iteration(s, s) for s in range(7, 9)) + "\n", read_at=_read_at(8))
    assert reader.reader.pending_saves == {5: _read_at(5)}
    provisional = reader.figures()
    # Step 8, stamped the very moment the lifecycle pod was read up to, waits: a lifecycle line
    # of that same moment, still to come, would go first.
    assert provisional is not None and provisional.highest_step == 7
    assert provisional.checkpoint_save == 0.0
    done = f"{_stamp(9)} successfully saved checkpoint from iteration 5 to /ckpt/iter_5\n"
    reader.feed(LIFECYCLE, done, read_at=_read_at(10))
    reader.feed(STEPS, _iteration(10, 9) + "\n", read_at=_read_at(10))
    reader.close()
    g = reader.figures()
    assert g is not None
    assert (g.checkpoint_save, g.highest_step, g.interruptions) == (4.0, 9, 0)
    assert reader.reader.pending_saves == {}


def test_a_line_waits_until_the_other_worker_cannot_precede_it() -> None:
    reader = WorkerLogReader()
    start = "2026-03-14T10:00:00.000000Z [before the start of training step] datetime: "
    reader.feed(STEPS, _iteration(3, 3) + "\n")
    assert reader.figures() is None  # the lifecycle pod may still show the start before it
    reader.feed(LIFECYCLE, start + "2026-03-14 10:00:00.000000\n")
    assert reader.figures() is None  # the start is out; the step waits for a later line or mark
    reader.feed(LIFECYCLE, "", read_at=4e9)  # the lifecycle pod was read up to a later time
    g = reader.figures()
    assert g is not None and g.highest_step == 3
