"""The log cursor (specs/certify.md §6.1, ADR-005): kubelet timestamps to the nanosecond,
offsets and all; ``sinceTime`` at the cursor's whole second; the lines past a cursor."""

from __future__ import annotations

from glimmer.certify.measure.log_cursor import Cursor, advance, line_stamp, stamp_ns

T = "2026-12-02T03:00:01.123456789Z"


def test_a_timestamp_is_read_to_the_nanosecond_whatever_its_zone_and_fraction() -> None:
    base = stamp_ns("2026-12-02T03:00:01Z")
    assert base is not None
    assert stamp_ns(T) == base + 123_456_789
    assert stamp_ns("2026-12-02T03:00:01.5Z") == base + 500_000_000
    assert stamp_ns("2026-12-02T05:30:01.123456789+02:30") == base + 123_456_789
    assert stamp_ns("2026-12-02T00:00:01-03:00") == base
    assert stamp_ns("yesterday") is None


def test_since_time_is_the_cursors_whole_second_in_utc() -> None:
    assert Cursor("u", 0, "2026-12-02T05:30:01.9+02:30").since_time() == "2026-12-02T03:00:01Z"
    assert Cursor("u").since_time() is None


def test_lines_at_or_before_the_cursor_are_dropped_and_the_cursor_moves_past_the_rest() -> None:
    lines = [
        "2026-12-02T03:00:01.000000001Z early\n",
        f"{T} a\n",
        f"{T} b\n",
        "2026-12-02T03:00:01.9Z c\n",
        "continued, no prefix\n",
        "2026-12-02T03:00:02Z d",  # unterminated: not yet
    ]
    got = advance("".join(lines), Cursor("u", 0, T, 1))
    assert got.lines == (f"{T} b", "2026-12-02T03:00:01.9Z c", "continued, no prefix")
    last = got.cursor_after(3, Cursor("u"))
    assert (last.stamp, last.at_stamp) == ("2026-12-02T03:00:01.9Z", 2)
    final = advance("".join(lines), last, final=True)
    assert final.lines == ("2026-12-02T03:00:02Z d",)


def test_a_log_without_timestamps_is_a_count_of_its_lines() -> None:
    first = advance("one\ntwo\n", Cursor("u"))
    after = first.cursor_after(2, Cursor("u"))
    assert (after.stamp, after.at_stamp) == (None, 2)
    assert advance("one\ntwo\nthree\n", after).lines == ("three",)


def test_a_line_stamp_is_the_prefix_as_printed() -> None:
    assert line_stamp(f"{T} text") == T
    assert line_stamp(f"{T}text") is None
