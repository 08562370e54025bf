"""The run phase over required results, and the four counters (burnin.md §2.11c)."""

from __future__ import annotations

from glimmer.contract.vocab import Phase
from glimmer.verdict.run_phase import Counters, ResultView, count_results, run_phase


def r(phase: Phase, required: bool = True, kind: str = "gpu-burn") -> ResultView:
    return ResultView(kind=kind, phase=phase, required=required)


def test_a_required_failure_beats_a_required_error() -> None:
    assert run_phase([r(Phase.ERROR), r(Phase.FAILED), r(Phase.PASSED)]) is Phase.FAILED


def test_a_required_error_with_others_passed_is_error() -> None:
    assert run_phase([r(Phase.ERROR), r(Phase.PASSED)]) is Phase.ERROR


def test_optional_results_never_decide_but_are_counted() -> None:
    results = [r(Phase.PASSED), r(Phase.FAILED, required=False), r(Phase.ERROR, required=False)]
    assert run_phase(results) is Phase.PASSED
    assert count_results(results) == Counters(passed=1, failed=1, errored=1)


def test_skips_never_decide_so_an_all_skipped_run_passes() -> None:
    assert run_phase([r(Phase.SKIPPED), r(Phase.SKIPPED)]) is Phase.PASSED
    assert count_results([r(Phase.SKIPPED)]).skipped == 1


def test_a_synthetic_result_always_counts_as_required() -> None:
    synthetic = ResultView(kind="", phase=Phase.ERROR, required=False)
    assert run_phase([synthetic]) is Phase.ERROR


def test_an_empty_run_passes_and_cancelled_results_are_not_counted() -> None:
    assert run_phase([]) is Phase.PASSED
    assert count_results([r(Phase.CANCELLED)]) == Counters()
