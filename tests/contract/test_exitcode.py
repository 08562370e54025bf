import pytest

from glimmer.contract.exitcode import classify_exit, has_skip_marker
from glimmer.contract.vocab import RunnerVerdict


def test_exit_0_is_pass() -> None:
    assert classify_exit(0, "").verdict is RunnerVerdict.PASS


def test_exit_1_is_fail_even_with_a_skip_marker() -> None:
    outcome = classify_exit(1, "NCCL_SKIP: irrelevant\n")
    assert outcome.verdict is RunnerVerdict.FAIL
    assert not outcome.undeclared_skip


def test_exit_2_with_marker_is_skip() -> None:
    outcome = classify_exit(2, "busbw=1\nNCCL_SKIP: fewer than two GPUs\n")
    assert outcome.verdict is RunnerVerdict.SKIP
    assert not outcome.undeclared_skip


def test_exit_2_without_marker_is_error_undeclared_skip() -> None:
    panic = "panic: runtime error: index out of range\n\ngoroutine 1 [running]:\nmain.main()\n"
    outcome = classify_exit(2, panic)
    assert outcome.verdict is RunnerVerdict.ERROR
    assert outcome.undeclared_skip


@pytest.mark.parametrize("code", [3, 4, 42, 128, 137, 143, 255, -1, -9, 2**40])
def test_every_other_exit_code_is_error(code: int) -> None:
    outcome = classify_exit(code, "FP4_GEMM_SKIP: not this code\n")
    assert outcome.verdict is RunnerVerdict.ERROR
    assert not outcome.undeclared_skip


@pytest.mark.parametrize(
    "stdout",
    [
        "NCCL_SKIP",
        "NCCL_SKIP: no second GPU",
        "metric=1\nGEMM_SWEEP_SKIP: fp4 not on this part\n",
        "A_SKIP\r\n",
        "X1_Y2_SKIP-later",
        "A__SKIP.",
    ],
)
def test_marker_at_line_start_declares_a_skip(stdout: str) -> None:
    assert has_skip_marker(stdout)


@pytest.mark.parametrize(
    "stdout",
    [
        "SKIP",  # nothing before _SKIP
        "_SKIP",  # must start with a letter
        "NCCL_SKIPPED",  # no word boundary after SKIP
        "NCCL_SKIP_2",  # underscore is a word character
        " NCCL_SKIP",  # leading whitespace
        "\tNCCL_SKIP",
        "nccl_skip",  # lower case
        "Nccl_SKIP",
        "reason: NCCL_SKIP",  # not at line start
        "1NCCL_SKIP",
    ],
)
def test_text_that_is_not_a_marker_declares_nothing(stdout: str) -> None:
    assert not has_skip_marker(stdout)


def test_marker_boundary_is_ascii_like_re2() -> None:
    # RE2's \b is ASCII-only, so a non-ASCII letter right after SKIP still ends the word.
    assert has_skip_marker("NCCL_SKIPé")
