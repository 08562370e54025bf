"""nccl-tests parsing (specs/certify.md §6.1, §9.2 scenario 26) over real-format fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import glimmer.api.certify.kinds  # noqa: F401  (registers LogProfile with the loader)
from glimmer.api.certify.logprofile import LogProfile
from glimmer.api.load import load_text
from glimmer.certify.measure.bandwidth import (
    NCCL_BANDWIDTH,
    NCCL_BANDWIDTH_PATTERN,
    BandwidthParser,
    BandwidthRow,
    Half,
    SizeResult,
    TableRow,
    bandwidth_parser,
    bus_factor,
    merge,
    parse_table,
    peak_bus_bw,
    strip_kubelet_timestamp,
)
from glimmer.certify.measure.render import Rank, render_log
from glimmer.errors import InputError

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nccl"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_single_node_all_reduce_with_kubelet_timestamps_reads_every_size() -> None:
    table = parse_table(_read("all_reduce_8xh100_kubelet.log"))
    assert len(table.rows) == 32  # 8 B .. 16 GiB by factor 2
    assert table.rows[0].size == 8 and table.rows[-1].size == 17179869184
    assert table.wrong == 0 and table.out_of_bounds == 0
    peak = table.peak_bus_bw()
    assert peak is not None and 470 < peak < 490  # 8xH100 NVLS ~480 (peers §4.2)
    # The footer averages every size, far below the peak (peers §2.2 gotcha).
    assert table.avg_bus_bw is not None and table.avg_bus_bw < peak / 2


def test_out_of_place_and_in_place_are_both_kept() -> None:
    row = parse_table(_read("all_reduce_8xh100_kubelet.log")).rows[-1]
    assert row.out_of_place.bus_bw != row.in_place.bus_bw
    assert row.dtype == "float" and row.redop == "sum" and row.root == -1


def test_busbw_is_algbw_times_the_all_reduce_factor() -> None:
    for row in parse_table(_read("all_reduce_8xh100_kubelet.log")).rows[-8:]:
        h = row.out_of_place
        assert h.bus_bw == pytest.approx(h.alg_bw * bus_factor("all_reduce", 8), abs=0.02)


def test_non_utc_offsets_are_stripped() -> None:
    text = _read("all_gather_2node_pdt.log")
    assert "-07:00 " in text
    rows = NCCL_BANDWIDTH.parse(text)
    assert len(rows) == 23 and all(r.bus_bw > 0 for r in rows[-3:])
    table = parse_table(text)
    assert table.rows[-1].redop == "none"
    big = table.rows[-1].out_of_place
    assert big.bus_bw == pytest.approx(big.alg_bw * 15 / 16, abs=0.02)


def test_single_rank_loopback_has_zero_busbw_but_rows() -> None:
    rows = NCCL_BANDWIDTH.parse(_read("loopback_1rank_ist.log"))
    assert len(rows) == 25
    assert all(r.bus_bw == 0 for r in rows) and rows[-1].alg_bw > 0


def test_raw_lines_without_timestamps_and_wrong_elements() -> None:
    table = parse_table(_read("alltoall_4node_raw.log"))
    assert len(table.rows) == 11
    assert table.wrong == 2048 and table.out_of_bounds == 2048


def test_header_and_info_lines_never_match() -> None:
    text = _read("all_reduce_8xh100_kubelet.log")
    for line in text.splitlines():
        if "NCCL INFO" in line or strip_kubelet_timestamp(line).startswith("#"):
            assert NCCL_BANDWIDTH.parse(line) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2026-03-14T09:26:53.123456789Z  1024 x", " 1024 x"),
        ("2026-03-14T09:26:53Z 8 x", "8 x"),
        ("2026-03-14T09:26:53.5+05:30 8 x", "8 x"),
        ("8 x", "8 x"),
    ],
)
def test_kubelet_timestamp_strip_cases(line: str, expected: str) -> None:
    assert strip_kubelet_timestamp(line) == expected


def test_profile_without_pattern_or_groups_is_refused() -> None:
    with pytest.raises(InputError, match="no bandwidthResult pattern"):
        BandwidthParser(None)
    with pytest.raises(InputError, match="named groups: size, algBW, busBW"):
        BandwidthParser(r"(?P<size>\d+) (?P<algBW>[\d.]+)")
    with pytest.raises(InputError, match="does not compile"):
        BandwidthParser(r"(?P<size>\d+")


@pytest.mark.parametrize(
    ("collective", "n", "factor"),
    [
        ("all_reduce", 8, 2 * 7 / 8),
        ("allreduce", 2, 1.0),
        ("all_gather", 4, 3 / 4),
        ("reduce_scatter", 16, 15 / 16),
        ("alltoall", 8, 7 / 8),
        ("sendrecv", 8, 1.0),
        ("all_reduce", 1, 0.0),
    ],
)
def test_bus_factor_per_collective(collective: str, n: int, factor: float) -> None:
    assert bus_factor(collective, n) == pytest.approx(factor)


def test_running_averages_merge_by_size_in_first_seen_order() -> None:
    old = [SizeResult(1024, 10.0, 20.0, 2)]
    new = [BandwidthRow(2048, 5.0, 6.0), BandwidthRow(1024, 40.0, 50.0)]
    got = merge(old, new)
    assert [r.size for r in got] == [1024, 2048]
    assert got[0] == SizeResult(1024, 20.0, 30.0, 3)
    assert peak_bus_bw(got) == 30.0 and peak_bus_bw([]) is None


@given(st.text())
@settings(max_examples=300)
def test_parsers_never_raise_on_arbitrary_text(text: str) -> None:
    parse_table(text)
    NCCL_BANDWIDTH.parse(text)


_bw = st.floats(min_value=0, max_value=9999, allow_nan=False).map(lambda v: round(v, 2))
_half = st.builds(
    Half,
    st.floats(min_value=0.01, max_value=99.99).map(lambda v: round(v, 2)),
    _bw,
    _bw,
    st.integers(min_value=0, max_value=10**6) | st.none(),
)


@given(
    st.lists(
        st.builds(
            TableRow,
            st.integers(min_value=0, max_value=2**40),
            st.integers(min_value=0, max_value=2**38),
            st.sampled_from(["float", "half", "bfloat16", "int8"]),
            st.sampled_from(["sum", "none", "max"]),
            st.integers(min_value=-1, max_value=7),
            _half,
            _half,
        ),
        max_size=20,
    )
)
def test_a_rendered_table_round_trips(rows: list[TableRow]) -> None:
    ranks = [Rank("hgx-node-0001", 0, "0x18", "NVIDIA H100 80GB HBM3")]
    text = render_log("all_reduce", ranks, rows, min_bytes=8, max_bytes=2**34)
    assert list(parse_table(text).rows) == rows
    assert [r.size for r in NCCL_BANDWIDTH.parse(text)] == [r.size for r in rows]


def _profile(patterns: str) -> LogProfile:
    text = (
        "apiVersion: certify.glimmer.ai/v1alpha1\nkind: LogProfile\n"
        "metadata: {name: nccl-bandwidth}\nspec:\n"
        "  timestamp: {layout: '2006-01-02T15:04:05.999999999Z'}\n"
        f"  patterns:\n{patterns}"
        "  workerStrategy: {replicatedJobName: launcher}\n"
    )
    (item,) = load_text(text, "lp.yaml")
    assert isinstance(item.obj, LogProfile)
    return item.obj


def test_a_loaded_log_profile_reads_the_fixture_like_the_builtin() -> None:
    lp = _profile(f"    bandwidthResult:\n      regex: '{NCCL_BANDWIDTH_PATTERN}'\n")
    text = _read("all_gather_2node_pdt.log")
    assert bandwidth_parser(lp).parse(text) == NCCL_BANDWIDTH.parse(text)
    with pytest.raises(InputError, match=r"LogProfile/nccl-bandwidth.*no bandwidthResult"):
        bandwidth_parser(_profile("    trainingStep: {regex: 'x'}\n"))
