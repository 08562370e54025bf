"""A finished job's JobLog as the Job's status.outcome and back, its text bounded."""

from __future__ import annotations

from glimmer.backends.kubernetes.certify.outcome_doc import (
    MAX_TEXT_BYTES,
    bounded_text,
    job_log,
    outcome_doc,
    outcome_of,
)
from glimmer.certify.jobs import JobLog


def test_outcome_round_trips_a_job_log() -> None:
    log = JobLog("row 1\nrow 2\n", 1, "NCCL error", "nvlink", ("gpu-02",), 12.5)
    doc = outcome_doc(log)
    assert doc == {
        "text": "row 1\nrow 2\n",
        "exitCode": 1,
        "error": "NCCL error",
        "path": "nvlink",
        "crashedOn": ["gpu-02"],
        "elapsedSeconds": 12.5,
    }
    assert job_log(doc) == log


def test_a_job_without_outcome_has_none_yet() -> None:
    assert outcome_of({"status": {"conditions": []}}) is None
    assert outcome_of({}) is None
    assert outcome_of({"status": {"outcome": {"exitCode": 0, "text": "ok"}}}) == JobLog("ok", 0)


def test_a_long_log_keeps_its_head_and_tail_within_the_bound() -> None:
    lines = [f"line {i:07d}\n" for i in range(40_000)]  # 520,000 bytes
    text = bounded_text("".join(lines))
    assert len(text.encode()) <= MAX_TEXT_BYTES
    assert text.startswith(lines[0])
    assert text.endswith(lines[-1])
    assert "[log cut to 262144 of 520000 bytes]" in text


def test_a_short_log_is_kept_as_it_is() -> None:
    assert bounded_text("ok\n") == "ok\n"
