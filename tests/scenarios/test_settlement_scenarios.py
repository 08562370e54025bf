"""Acceptance scenarios of burnin.md §11.2 (1–13, 15, 38, 41–45) against the settlement rules.

Each runner's output is written the way a runner prints it and goes through the contract's
parser, then through the same pure functions every scope and substrate calls: harvest, the
log-fetch rule, Pair/Group combination, completeAttempt, and the run phase.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from glimmer.contract.parse import parse
from glimmer.contract.vocab import ParsedResult, Phase, Threshold
from glimmer.verdict.attempts import Step, Trigger, UnitState, complete_attempt, next_trigger
from glimmer.verdict.group import combine_group
from glimmer.verdict.pair import combine_pair
from glimmer.verdict.run_phase import ResultView, count_results, run_phase
from glimmer.verdict.settle import AttemptOutcome, apply_log_fetch_rule, harvest


@dataclass(frozen=True)
class Execution:
    """One pod of a unit, as the backend observed it."""

    stdout: str
    exit_code: int
    reason: str = ""
    detail: str = ""
    log_error: str | None = None


@dataclass
class Unit:
    """A unit driven attempt by attempt, the way the engine will drive it."""

    kind: str
    gates: tuple[Threshold, ...] = ()
    retry_limit: int = 0
    state: UnitState = field(default_factory=UnitState)
    triggers: list[Trigger] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)

    def observe(self, parsed: ParsedResult) -> Step:
        previous = self.steps[-1].attempt.phase if self.steps else None
        self.triggers.append(next_trigger(previous, segmented=self.state.segmented))
        step = complete_attempt(
            self.state,
            parsed,
            self.gates,
            attempt_number=len(self.steps) + 1,
            retry_limit=self.retry_limit,
        )
        self.state = step.state
        self.steps.append(step)
        return step

    def run(self, execution: Execution) -> Step:
        parsed = parse(
            self.kind, "" if execution.log_error else execution.stdout, execution.exit_code
        )
        parsed = harvest(parsed, reason=execution.reason, detail=execution.detail)
        parsed = apply_log_fetch_rule(parsed, self.gates, execution.log_error)
        return self.observe(parsed)

    def settle(self, *executions: Execution) -> AttemptOutcome:
        for execution in executions:
            step = self.run(execution)
            if step.settled is not None:
                return step.settled
        raise AssertionError("the unit never settled")


def gate(metric: str, comparison: str, value: str, applicability: str = "") -> Threshold:
    return Threshold(metric, comparison, value, applicability)


CLOCK_GATES = (gate("sustainedClockPct", "GreaterThanOrEqual", "70"),)
CLOCK_OK = "sustained_clock_pct=83.22\nsm_clock_mhz=2499\nCLOCKPROBE_PASS\n"


def phase_of_run(*results: tuple[Phase, bool]) -> Phase:
    return run_phase(ResultView("clockprobe", phase, required) for phase, required in results)


def test_scenario_01_clean_exit_meeting_every_gate_passes() -> None:
    unit = Unit("clockprobe", CLOCK_GATES)
    result = unit.settle(Execution("sustainedClockPct=83.22\nCLOCKPROBE_PASS\n", 0))
    assert result.phase is Phase.PASSED
    assert result.message == "CLOCKPROBE_PASS"
    assert phase_of_run((result.phase, True)) is Phase.PASSED
    assert count_results([ResultView("clockprobe", result.phase)]).passed == 1


def test_scenario_02_violated_gate_fails_on_the_measurement_without_retry() -> None:
    unit = Unit("clockprobe", CLOCK_GATES, retry_limit=3)
    result = unit.settle(Execution("sustainedClockPct=20.3\nCLOCKPROBE_PASS\n", 0))
    assert result.phase is Phase.FAILED
    assert (result.violations[0].cause, result.violations[0].kind) == ("Measurement", "Unsatisfied")
    assert len(unit.steps) == 1 and unit.state.error_retries == 0
    assert phase_of_run((result.phase, True)) is Phase.FAILED


def test_scenario_03_gate_on_a_metric_never_printed_fails_on_the_evidence() -> None:
    unit = Unit("clockprobe", (gate("throttleEvents", "Equal", "0"),))
    result = unit.settle(Execution(CLOCK_OK, 0))
    assert result.phase is Phase.FAILED
    assert (result.violations[0].kind, result.violations[0].cause) == ("NotReported", "Evidence")


def test_scenario_04_empty_harvest_with_gates_is_a_retried_error() -> None:
    unit = Unit("clockprobe", CLOCK_GATES, retry_limit=2)
    empty = Execution("", 0)
    result = unit.settle(empty, empty, empty)
    assert result.phase is Phase.ERROR
    assert "reported no metrics at all" in result.message
    assert unit.triggers == [Trigger.INITIAL, Trigger.ERROR_RETRY, Trigger.ERROR_RETRY]
    assert unit.state.error_retries == 2
    # Without gates the same output is a pass.
    assert Unit("clockprobe").settle(empty).phase is Phase.PASSED


def test_scenario_05_declared_skip_is_skipped_and_never_decides_the_run() -> None:
    unit = Unit("nccl", retry_limit=3)
    result = unit.settle(Execution("NCCL_SKIP: node has 1 GPU; nothing to all-reduce\n", 2))
    assert result.phase is Phase.SKIPPED
    assert len(unit.steps) == 1
    assert phase_of_run((result.phase, True)) is Phase.PASSED


PANIC = """panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a1b2c]

goroutine 1 [running]:
main.measure(...)
\t/src/runner/main.go:88 +0x2c
exit status 2
"""


def test_scenario_06_undeclared_exit_two_is_an_error_that_explains_itself() -> None:
    result = Unit("nccl").settle(Execution(PANIC, 2))
    assert result.phase is Phase.ERROR
    assert result.message.startswith("runner exited 2 (the skip code) without declaring a skip")
    assert result.message.endswith("[runner said: exit status 2]")


def test_scenario_07_runner_fail_with_no_metrics_is_failed_without_violations() -> None:
    result = Unit("gpu-burn", (gate("miscompares", "Equal", "0"),)).settle(
        Execution("GPU_BURN_FAIL: 12 miscompares on device 0\n", 1)
    )
    assert result.phase is Phase.FAILED
    assert result.violations == ()


def test_scenario_08_oom_kill_keeps_runner_words_and_kubelet_reason() -> None:
    stdout = "miscompares=0\nTHERMAL_SOAK_SKIP: marker printed before the kill\n"
    result = Unit("thermal-soak").settle(Execution(stdout, 137, reason="OOMKilled"))
    assert result.phase is Phase.ERROR
    assert result.message == (
        "THERMAL_SOAK_SKIP: marker printed before the kill "
        '[runner terminated abnormally (exit 137, reason "OOMKilled")]'
    )


def test_scenario_09_deadline_kill_is_an_error_even_after_exit_zero() -> None:
    result = Unit("clockprobe", CLOCK_GATES).settle(
        Execution(CLOCK_OK, 0, reason="DeadlineExceeded")
    )
    assert result.phase is Phase.ERROR
    assert result.message.startswith("test exceeded its deadline")


def test_scenario_10_unreadable_logs_are_an_error_not_a_failure() -> None:
    result = Unit("clockprobe", CLOCK_GATES).settle(
        Execution(CLOCK_OK, 0, log_error="container runner not found")
    )
    assert result.phase is Phase.ERROR
    assert result.message.startswith("runner logs unavailable (container runner not found)")


HOST_HEALTH = "xid_count=0\necc_errors=n/a\nrows_remapped=n/a\nHOST_HEALTH_OK\n"


def test_scenario_11_na_relaxes_only_a_required_if_measurable_gate() -> None:
    relaxed = Unit("host-health", (gate("eccErrors", "Equal", "0", "RequiredIfMeasurable"),))
    passed = relaxed.settle(Execution(HOST_HEALTH, 0))
    assert passed.phase is Phase.PASSED
    assert [(e.metric, e.reason) for e in passed.not_evaluated] == [
        ("eccErrors", "unmeasurable on this hardware")
    ]
    assert "[not evaluated: eccErrors is unmeasurable on this hardware]" in passed.message
    required = Unit("host-health", (gate("eccErrors", "Equal", "0"),))
    failed = required.settle(Execution(HOST_HEALTH, 0))
    assert failed.phase is Phase.FAILED
    assert failed.violations[0].kind == "UnmeasurableRequired"


def test_scenario_12_three_failed_gates_in_spec_order_with_a_summary() -> None:
    gates = (
        gate("sustainedClockPct", "GreaterThanOrEqual", "70"),
        gate("smClockMHz", "GreaterThanOrEqual", "2400"),
        gate("throttleEvents", "Equal", "0"),
    )
    stdout = "sustained_clock_pct=20.3\nsm_clock_mhz=611\nCLOCKPROBE_FAIL: wedged\n"
    result = Unit("clockprobe", gates).settle(Execution(stdout, 0))
    assert [v.metric for v in result.violations] == [
        "sustainedClockPct",
        "smClockMHz",
        "throttleEvents",
    ]
    assert result.message == (
        "sustainedClockPct: got 20.3, need GreaterThanOrEqual 70 [CLOCKPROBE_FAIL: wedged] "
        "[and 2 more gates failed: smClockMHz (hardware), throttleEvents (not measured)]"
    )


def test_scenario_13_run_phase_over_required_and_optional_results() -> None:
    assert phase_of_run((Phase.ERROR, True), (Phase.FAILED, True)) is Phase.FAILED
    assert phase_of_run((Phase.ERROR, True), (Phase.PASSED, True)) is Phase.ERROR
    optional = [ResultView("gpu-burn", Phase.PASSED), ResultView("x", Phase.FAILED, False)]
    assert run_phase(optional) is Phase.PASSED
    assert count_results(optional).failed == 1


def test_scenario_15_an_unknown_scope_result_is_an_error_that_decides_the_run() -> None:
    # The engine settles such a test as Error (never Skipped); the run phase then follows it.
    assert run_phase([ResultView("clockprobe", Phase.ERROR, True)]) is Phase.ERROR


def ib(stdout: str, code: int) -> ParsedResult:
    return parse("ib-write-bw", stdout, code)


def test_scenario_38_pair_precedence_is_about_the_link() -> None:
    gates = (gate("bandwidthGbps", "GreaterThanOrEqual", "89"),)

    def pair(server: ParsedResult | None, client: ParsedResult | None) -> Phase:
        unit = Unit("ib-write-bw", gates)
        return unit.observe(combine_pair("n1", "n2", server, client)).attempt.phase

    assert (
        pair(ib("IB_WRITE_BW_ERROR: peer gone\n", 3), ib("IB_WRITE_BW_FAIL: x\n", 1)) is Phase.ERROR
    )
    assert (
        pair(ib("IB_WRITE_BW_PASS\n", 0), ib("IB_WRITE_BW_FAIL: no traffic\n", 1)) is Phase.FAILED
    )
    assert pair(ib("IB_WRITE_BW_SKIP: no RDMA device\n", 2), None) is Phase.SKIPPED
    assert pair(ib("IB_WRITE_BW_PASS\n", 0), None) is Phase.ERROR
    assert (
        pair(ib("IB_WRITE_BW_PASS\n", 0), ib("bw_average=99.61\nIB_WRITE_BW_PASS\n", 0))
        is Phase.PASSED
    )


def nccl(stdout: str, code: int) -> ParsedResult:
    return parse("nccl", stdout, code)


def test_scenario_41_group_error_outranks_fail_and_a_silent_rank_is_an_error() -> None:
    nodes = ["g0", "g1", "g2"]
    assert combine_group(nodes, [nccl("", 1), nccl("", 3), nccl("", 0)]).verdict == "Error"
    silent = combine_group(nodes, [nccl("busbw=12\nNCCL_PASS\n", 0), nccl("", 0), None])
    outcome = Unit("nccl").observe(silent).attempt
    assert outcome.phase is Phase.ERROR
    assert "rank 2 (g2) did not report" in outcome.message


def test_scenario_42_group_metric_election() -> None:
    nodes = ["g0", "g1"]
    ranks = [
        nccl("busbw=12.00\ngpuTempC=71\nncclTransport=net\neccErrors=0\n", 0),
        nccl("busbw=11.00\ngpuTempC=83\nncclTransport=p2p\neccErrors=n/a\n", 0),
    ]
    combined = combine_group(nodes, ranks)
    assert combined.metrics["busBandwidthGBs"] == "12.00"
    assert combined.metrics["gpuTempC"] == "83"
    assert "ncclTransport" not in combined.metrics
    assert {"ncclTransport", "eccErrors"} <= combined.unmeasurable
    assert "ranks disagreed" in combined.message


SOAK_GATES = (
    gate("elapsedS", "GreaterThanOrEqual", "850"),
    gate("gpuTempC", "LessThanOrEqual", "87"),
    gate("sustainedClockPct", "GreaterThanOrEqual", "60"),
    gate("xidEvents", "Equal", "0"),
)


def segment(elapsed: int, temp: int, clock: str, xid: int = 0, ecc: int = 0) -> Execution:
    return Execution(
        f"soak_seconds={elapsed}\npeak_temp_c={temp}\nsustainedClockPct={clock}\n"
        f"xid_count={xid}\neccErrors={ecc}\nTHERMAL_SOAK_PASS\n",
        0,
    )


def test_scenario_43_segmented_soak_folds_and_judges_once() -> None:
    unit = Unit(
        "thermal-soak", SOAK_GATES, state=UnitState(segments_required=3, segment_seconds=300)
    )
    result = unit.settle(
        segment(300, 80, "72.5", ecc=1),
        segment(300, 86, "69.9", ecc=1),
        segment(300, 75, "71", ecc=2),
    )
    assert unit.triggers == [Trigger.INITIAL, Trigger.SEGMENT, Trigger.SEGMENT]
    assert result.phase is Phase.PASSED
    assert result.metrics["elapsedS"] == "900"
    assert result.metrics["gpuTempC"] == "86"
    assert result.metrics["sustainedClockPct"] == "69.9"
    assert result.metrics["eccErrors"] == "2"


def test_scenario_44_lost_segments_cost_retries_and_keep_the_aggregate() -> None:
    unit = Unit(
        "thermal-soak",
        SOAK_GATES,
        retry_limit=1,
        state=UnitState(segments_required=3, segment_seconds=300),
    )
    killed = Execution("", 137, reason="Error")
    result = unit.settle(segment(300, 80, "72"), killed, killed)
    assert result.phase is Phase.ERROR
    assert unit.state.segments_completed == 1 and unit.state.error_retries == 1
    assert result.metrics["elapsedS"] == "300"
    assert unit.triggers == [Trigger.INITIAL, Trigger.SEGMENT, Trigger.ERROR_RETRY]
    failing = Unit(
        "thermal-soak", SOAK_GATES, state=UnitState(segments_required=3, segment_seconds=300)
    )
    assert (
        failing.settle(Execution("miscompares=4\nTHERMAL_SOAK_FAIL: miscompares\n", 1)).phase
        is Phase.FAILED
    )


def test_scenario_45_abort_early_fires_only_on_provable_violations() -> None:
    def first_segment(execution: Execution, *, abort: bool) -> Step:
        state = UnitState(segments_required=4, segment_seconds=300)
        parsed = parse("thermal-soak", execution.stdout, execution.exit_code)
        return complete_attempt(
            state, parsed, SOAK_GATES, attempt_number=1, retry_limit=0, abort_early=abort
        )

    assert first_segment(segment(300, 70, "72", xid=2), abort=True).done
    assert first_segment(segment(300, 70, "40"), abort=True).done  # a Min under a floor
    assert not first_segment(segment(300, 70, "72", xid=2), abort=False).done  # off by default
    ceiling = (gate("sustainedClockPct", "LessThanOrEqual", "50"),)
    state = UnitState(segments_required=4, segment_seconds=300)
    parsed = parse("thermal-soak", "sustainedClockPct=72\n", 0)
    assert not complete_attempt(
        state, parsed, ceiling, attempt_number=1, retry_limit=0, abort_early=True
    ).done
    unreported = (gate("memoryErrors", "Equal", "0"),)
    assert not complete_attempt(
        state, parsed, unreported, attempt_number=1, retry_limit=0, abort_early=True
    ).done
