"""attemptOutcome, gateOutcome, harvest and the log-fetch rule (burnin.md §2.7, §2.7a, §2.11b)."""

from __future__ import annotations

from glimmer.contract.parse import parse
from glimmer.contract.vocab import ParsedResult, Phase, RunnerVerdict, Threshold
from glimmer.verdict.settle import (
    DEADLINE_MESSAGE,
    apply_log_fetch_rule,
    attempt_outcome,
    gate_outcome,
    harvest,
)

GATES = (Threshold("miscompares", "Equal", "0"),)


def test_clean_exit_with_gates_and_no_output_is_a_retryable_error() -> None:
    out = attempt_outcome(parse("gpu-burn", "", 0), GATES, segmented=False)
    assert out.phase is Phase.ERROR
    assert out.message == (
        "runner exited 0 but reported no metrics at all — it measured nothing, so the test's 1 "
        "threshold could not be evaluated; no verdict (a runner killed or evicted before it "
        "printed looks like this)"
    )


def test_empty_harvest_keeps_the_runners_last_words() -> None:
    out = attempt_outcome(parse("gpu-burn", "starting up\n", 0), GATES * 2, segmented=False)
    assert out.phase is Phase.ERROR
    assert "the test's 2 thresholds could not" in out.message
    assert out.message.endswith(" [runner said: starting up]")


def test_a_rejected_name_or_an_na_is_not_an_empty_harvest() -> None:
    out = attempt_outcome(parse("custom", "#bad=1\n", 0), GATES, segmented=False)
    assert out.phase is Phase.FAILED  # partial output still fails closed
    na = attempt_outcome(parse("custom", "eccErrors=n/a\n", 0), GATES, segmented=False)
    assert na.phase is Phase.FAILED


def test_clean_exit_with_no_output_and_no_gates_passes() -> None:
    out = attempt_outcome(parse("custom", "", 0), (), segmented=False)
    assert out.phase is Phase.PASSED
    assert out.message == ""


def test_fail_is_honoured_with_zero_metrics_and_no_violations() -> None:
    out = attempt_outcome(
        parse("gpu-burn", "GPU_BURN_FAIL: 3 miscompares\n", 1), GATES, segmented=False
    )
    assert out.phase is Phase.FAILED
    assert out.violations == ()
    assert out.message == "GPU_BURN_FAIL: 3 miscompares"


def test_declared_skip_is_skipped_even_with_gates_and_no_metrics() -> None:
    out = attempt_outcome(parse("nccl", "NCCL_SKIP: one GPU\n", 2), GATES, segmented=False)
    assert out.phase is Phase.SKIPPED
    assert out.message == "NCCL_SKIP: one GPU"


def test_undeclared_skip_is_an_error_with_a_fixed_explanation() -> None:
    out = attempt_outcome(parse("nccl", "panic: boom\ngoroutine 1\n", 2), GATES, segmented=False)
    assert out.phase is Phase.ERROR
    assert out.message.startswith("runner exited 2 (the skip code) without declaring a skip — ")
    assert "the hardware is UNJUDGED, not out of scope" in out.message
    assert out.message.endswith("[runner said: goroutine 1]")


def test_rejected_names_are_appended_first_eight_then_counted() -> None:
    stdout = "".join(f"#m{i}=1\n" for i in range(10)) + "m=1\n"
    out = attempt_outcome(parse("custom", stdout, 0), (), segmented=False)
    assert out.phase is Phase.PASSED
    assert out.message == (
        "[runner emitted 10 metric names the contract rejects: #m0, #m1, #m2, #m3, #m4, #m5, "
        "#m6, #m7, and 2 more]"
    )
    one = attempt_outcome(parse("custom", "#x=1\nFAIL\n", 1), (), segmented=False)
    assert one.message == "FAIL [runner emitted 1 metric name the contract rejects: #x]"


def test_unmeasurable_names_are_carried_sorted_on_every_phase() -> None:
    for code in (0, 1, 3):
        parsed = parse("custom", "zeta=n/a\nalpha=n/a\n", code)
        assert attempt_outcome(parsed, (), segmented=False).unmeasurable == ("alpha", "zeta")


def test_a_soak_segment_is_not_judged_by_its_gates() -> None:
    out = attempt_outcome(parse("gpu-burn", "miscompares=4\n", 0), GATES, segmented=True)
    assert out.phase is Phase.PASSED
    assert out.violations == ()


def test_gate_outcome_failure_message_layout() -> None:
    gates = [
        Threshold("a", "GreaterThanOrEqual", "10"),
        Threshold("n", "Equal", "0", "RequiredIfMeasurable"),
        Threshold("b", "Equal", "0"),
        Threshold("c", "Equal", "0"),
    ]
    out = gate_outcome({"a": "5", "b": "1"}, {"n"}, gates, "RUNNER_PASS")
    assert out.phase is Phase.FAILED
    assert out.message == (
        "a: got 5, need GreaterThanOrEqual 10 [RUNNER_PASS] "
        "[and 2 more gates failed: b (hardware), c (not measured)]"
    )
    assert [v.metric for v in out.violations] == ["a", "b", "c"]
    assert out.not_evaluated == ()  # truncated: n came after the first violation


def test_gate_outcome_pass_names_what_was_not_evaluated() -> None:
    gates = [Threshold("n", "Equal", "0", "RequiredIfMeasurable")]
    out = gate_outcome({}, {"n"}, gates, "ALL_OK")
    assert out.phase is Phase.PASSED
    assert out.message == "ALL_OK [not evaluated: n is unmeasurable on this hardware]"


def _error(exit_code: int, message: str = "") -> ParsedResult:
    return ParsedResult(verdict=RunnerVerdict.ERROR, exit_code=exit_code, message=message)


def test_abnormal_termination_account_replaces_an_empty_message() -> None:
    got = harvest(_error(137), reason="OOMKilled", detail="")
    assert got.message == 'runner terminated abnormally (exit 137, reason "OOMKilled")'


def test_abnormal_termination_is_appended_outside_zero_to_three() -> None:
    got = harvest(_error(137, "last words"), reason="OOMKilled", detail="out\n of   memory")
    assert got.message == (
        'last words [runner terminated abnormally (exit 137, reason "OOMKilled"): out of memory]'
    )


def test_a_runner_chosen_exit_three_keeps_only_its_own_words() -> None:
    assert harvest(_error(3, "no device"), reason="Error", detail="x").message == "no device"


def test_kubelet_detail_is_clamped_to_512_bytes_without_splitting_a_character() -> None:
    got = harvest(_error(128), reason="StartError", detail="é" * 400)
    detail = got.message.split(": ", 1)[1]
    assert detail.endswith("… (truncated)")
    kept = detail.removesuffix("… (truncated)")
    assert len(detail.encode()) <= 512
    assert kept == "é" * ((512 - len("… (truncated)".encode())) // 2)


def test_deadline_exceeded_is_always_an_error_even_after_exit_zero() -> None:
    parsed = parse("custom", "m=1\n", 0)
    got = harvest(parsed, reason="DeadlineExceeded")
    assert got.verdict is RunnerVerdict.ERROR
    assert got.message == DEADLINE_MESSAGE
    assert attempt_outcome(got, (), segmented=False).phase is Phase.ERROR


def test_harvest_leaves_a_clean_result_alone() -> None:
    parsed = parse("custom", "m=1\nOK\n", 0)
    assert harvest(parsed, reason="Completed") is parsed


def test_log_fetch_rule_turns_a_blind_pass_into_an_error() -> None:
    parsed = parse("custom", "", 0)
    got = apply_log_fetch_rule(parsed, GATES, "container not found")
    assert got.verdict is RunnerVerdict.ERROR
    assert got.message == (
        "runner logs unavailable (container not found) — thresholds cannot be evaluated; no verdict"
    )


def test_log_fetch_rule_needs_all_of_its_conditions() -> None:
    seen = parse("custom", "miscompares=0\n", 0)
    assert apply_log_fetch_rule(seen, GATES, "gone") is seen  # every gated metric present
    na = parse("custom", "miscompares=n/a\n", 0)
    assert apply_log_fetch_rule(na, GATES, "gone") is na  # declared n/a counts as seen
    empty = parse("custom", "", 0)
    assert apply_log_fetch_rule(empty, GATES, None) is empty  # logs were readable
    assert apply_log_fetch_rule(empty, (), "gone") is empty  # no gates
    failed = parse("custom", "", 1)
    assert apply_log_fetch_rule(failed, GATES, "gone") is failed  # not a Pass
