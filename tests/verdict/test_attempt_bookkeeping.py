"""completeAttempt bookkeeping (burnin.md §2.11a, §2.12): repeats, retries, segments, abortEarly."""

from __future__ import annotations

from glimmer.contract.parse import parse
from glimmer.contract.vocab import Phase, Threshold
from glimmer.verdict.attempts import Trigger, UnitState, complete_attempt, next_trigger
from glimmer.verdict.fold import segments_required

GATE = (Threshold("miscompares", "Equal", "0"),)


def test_triggers() -> None:
    assert next_trigger(None, segmented=False) is Trigger.INITIAL
    assert next_trigger(Phase.ERROR, segmented=True) is Trigger.ERROR_RETRY
    assert next_trigger(Phase.PASSED, segmented=False) is Trigger.REPEAT
    assert next_trigger(Phase.PASSED, segmented=True) is Trigger.SEGMENT


def test_repeats_are_an_and_of_every_attempt() -> None:
    state = UnitState(repeats_required=3)
    ok = parse("gpu-burn", "miscompares=0\n", 0)
    first = complete_attempt(state, ok, GATE, attempt_number=1, retry_limit=0)
    assert not first.done and first.message == "attempt 1/3 passed"
    second = complete_attempt(first.state, ok, GATE, attempt_number=2, retry_limit=0)
    assert second.message == "attempt 2/3 passed"
    third = complete_attempt(second.state, ok, GATE, attempt_number=3, retry_limit=0)
    assert third.settled is not None and third.settled.phase is Phase.PASSED
    assert third.state.repeats_completed == 3


def test_a_failure_settles_at_once_even_with_retry_budget() -> None:
    state = UnitState(repeats_required=3, repeats_completed=1)
    bad = parse("gpu-burn", "miscompares=2\n", 0)
    step = complete_attempt(state, bad, GATE, attempt_number=2, retry_limit=5)
    assert step.settled is not None and step.settled.phase is Phase.FAILED
    assert step.state.error_retries == 0


def test_an_error_is_retried_without_consuming_a_repeat() -> None:
    state = UnitState(repeats_required=2)
    broken = parse("gpu-burn", "GPU_BURN_ERROR: no device\n", 3)
    step = complete_attempt(state, broken, GATE, attempt_number=1, retry_limit=1)
    assert not step.done
    assert step.state.error_retries == 1 and step.state.repeats_completed == 0
    assert step.message == "attempt 1 errored (GPU_BURN_ERROR: no device); retrying"
    again = complete_attempt(step.state, broken, GATE, attempt_number=2, retry_limit=1)
    assert again.settled is not None and again.settled.phase is Phase.ERROR


def test_skip_settles_and_is_never_retried() -> None:
    skip = parse("nccl", "NCCL_SKIP: one gpu\n", 2)
    step = complete_attempt(UnitState(), skip, GATE, attempt_number=1, retry_limit=3)
    assert step.settled is not None and step.settled.phase is Phase.SKIPPED


def soak(n: int, seconds: int = 300) -> UnitState:
    return UnitState(segments_required=n, segment_seconds=seconds)


SOAK_GATES = (
    Threshold("elapsedS", "GreaterThanOrEqual", "850"),
    Threshold("gpuTempC", "LessThanOrEqual", "87"),
    Threshold("sustainedClockPct", "GreaterThanOrEqual", "60"),
    Threshold("xidEvents", "Equal", "0"),
)


def window(elapsed: int, temp: int, clock: str, xid: int = 0, ecc: int = 0) -> str:
    return (
        f"soak_seconds={elapsed}\npeak_temp_c={temp}\nsustainedClockPct={clock}\n"
        f"xid_count={xid}\neccErrors={ecc}\nTHERMAL_SOAK_PASS\n"
    )


def test_a_soak_folds_three_segments_and_judges_the_aggregate_once() -> None:
    state = soak(3)
    windows = [
        window(300, 80, "72.5", ecc=1),
        window(300, 84, "70.1", ecc=2),
        window(300, 79, "71", ecc=2),
    ]
    messages = []
    for k, text in enumerate(windows, start=1):
        step = complete_attempt(
            state, parse("thermal-soak", text, 0), SOAK_GATES, attempt_number=k, retry_limit=0
        )
        state = step.state
        messages.append(step.message)
    assert messages[:2] == ["segment 1/3 complete", "segment 2/3 complete"]
    assert step.settled is not None and step.settled.phase is Phase.PASSED
    assert step.settled.metrics["elapsedS"] == "900"
    assert step.settled.metrics["gpuTempC"] == "84"
    assert step.settled.metrics["sustainedClockPct"] == "70.1"
    assert step.settled.metrics["eccErrors"] == "2"
    assert step.message == "3 segments of 300s completed"
    assert step.state.repeats_completed == step.state.repeats_required


def test_a_segment_gate_violation_is_judged_only_at_the_end() -> None:
    state = soak(2)
    hot = parse("thermal-soak", window(300, 95, "72"), 0)
    step = complete_attempt(state, hot, SOAK_GATES, attempt_number=1, retry_limit=0)
    assert not step.done  # no abortEarly: the gate waits for the aggregate
    last = complete_attempt(
        step.state,
        parse("thermal-soak", window(600, 70, "72"), 0),
        SOAK_GATES,
        attempt_number=2,
        retry_limit=0,
    )
    assert last.settled is not None and last.settled.phase is Phase.FAILED
    assert last.settled.message.startswith("2 segments of 300s completed; gpuTempC: got 95")


def test_abort_early_settles_failed_with_only_the_provable_violations() -> None:
    state = soak(4)
    step = complete_attempt(
        state,
        parse("thermal-soak", window(300, 70, "72", xid=1), 0),
        SOAK_GATES,
        attempt_number=1,
        retry_limit=0,
        abort_early=True,
    )
    assert step.settled is not None and step.settled.phase is Phase.FAILED
    assert [v.metric for v in step.settled.violations] == ["xidEvents"]
    assert step.settled.message == (
        "soak aborted after segment 1 of 4: xidEvents: got 1, need Equal 0. The aggregate "
        "already violates a gate no later segment could retract, so the remaining 3 segments "
        "were not burned"
    )


def test_abort_early_ignores_a_floor_on_a_sum_still_growing() -> None:
    state = soak(4)
    step = complete_attempt(
        state,
        parse("thermal-soak", window(300, 70, "72"), 0),
        SOAK_GATES,
        attempt_number=1,
        retry_limit=0,
        abort_early=True,
    )
    assert not step.done  # elapsedS 300 < 850 but later segments add to it


def test_a_failing_segment_ends_the_soak_with_its_own_window() -> None:
    state = soak(3)
    first = complete_attempt(
        state,
        parse("thermal-soak", window(300, 70, "72"), 0),
        SOAK_GATES,
        attempt_number=1,
        retry_limit=0,
    )
    failed = complete_attempt(
        first.state,
        parse("thermal-soak", "miscompares=3\nTHERMAL_SOAK_FAIL: x\n", 1),
        SOAK_GATES,
        attempt_number=2,
        retry_limit=5,
    )
    assert failed.settled is not None and failed.settled.phase is Phase.FAILED
    assert failed.settled.metrics == {"miscompares": "3"}


def test_an_errored_segment_is_retried_then_settles_error_with_the_aggregate() -> None:
    state = soak(3)
    first = complete_attempt(
        state,
        parse("thermal-soak", window(300, 70, "72"), 0),
        SOAK_GATES,
        attempt_number=1,
        retry_limit=1,
    )
    killed = parse("thermal-soak", "", 137)
    retry = complete_attempt(first.state, killed, SOAK_GATES, attempt_number=2, retry_limit=1)
    assert not retry.done and retry.state.segments_completed == 1
    spent = complete_attempt(retry.state, killed, SOAK_GATES, attempt_number=3, retry_limit=1)
    assert spent.settled is not None and spent.settled.phase is Phase.ERROR
    assert spent.settled.metrics["elapsedS"] == "300"


def test_segments_required_is_pinned_from_duration_and_segment() -> None:
    assert segments_required(900, 300) == 3


def test_segmented_history_keeps_first_failures_and_last_sixteen_passes() -> None:
    from glimmer.verdict.attempts import truncate_history

    phases = [Phase.PASSED] * 30
    phases[5] = Phase.ERROR
    attempts = list(enumerate(phases))
    kept, dropped = truncate_history(attempts, lambda a: a[1])
    indexes = [i for i, _ in kept]
    assert indexes == [0, 5, *range(14, 30)]
    assert dropped == 30 - len(indexes)
    short = attempts[:17]
    assert truncate_history(short, lambda a: a[1]) == (short, 0)
