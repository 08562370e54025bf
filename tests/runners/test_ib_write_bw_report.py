"""The perftest kinds: ib_write_bw / ib_write_lat output (written from perftest 4.5's own format
strings: RESULT_FMT_G, REPORT_FMT, RESULT_FMT_LAT, RESULT_FMT_LAT_DUR) read into figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.runners.ib_write_bw_report import (
    ReportError,
    failure_lines,
    read_bandwidth,
    read_latency,
)

FIXTURES = Path(__file__).parent / "fixtures" / "ib-write-bw"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_a_duration_mode_report_gives_the_mean_in_gbits() -> None:
    row = read_bandwidth(_read("bw-duration-gbits.txt"))
    assert row.message_bytes == 1048576
    assert row.average_gbps == 99.61
    assert row.peak_gbps == 0.0  # duration mode: never reported
    assert row.msg_rate_mpps == 0.011874


def test_a_report_not_in_gbits_is_refused() -> None:
    with pytest.raises(ReportError, match="MB/sec"):
        read_bandwidth(_read("bw-duration-mbytes.txt"))


def test_a_report_without_a_table_is_refused_and_its_failure_quoted() -> None:
    text = _read("memlock-cq.txt")
    with pytest.raises(ReportError, match="no results table"):
        read_bandwidth(text)
    assert failure_lines(text)[0] == "Couldn't create CQ"
    assert "Unable to find the Infiniband/RoCE device" in failure_lines(
        _read("no-device-stderr.txt")
    )


def test_a_run_that_carried_nothing_reads_as_zero() -> None:
    assert read_bandwidth(_read("bw-no-traffic.txt")).average_gbps == 0.0


def test_latency_with_percentiles() -> None:
    row = read_latency(_read("lat-iterations.txt"))
    assert (row.min_us, row.max_us, row.typical_us) == (1.58, 6.11, 1.65)
    assert row.avg_us == 1.71
    assert row.p99_us == 1.96
    assert row.iterations == 5000


def test_latency_from_a_build_without_the_percentile_columns_has_no_p99() -> None:
    row = read_latency(_read("lat-old-build.txt"))
    assert row.min_us == 1.58
    assert row.p99_us is None
    assert row.avg_us is None


def test_latency_in_duration_mode_has_only_the_mean() -> None:
    row = read_latency(_read("lat-duration.txt"))
    assert row.avg_us == 1.72
    assert row.min_us is None and row.p99_us is None
