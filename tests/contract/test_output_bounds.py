"""Runner output is bounded: what is read from a log and what is kept of it (issue 10 item 10).

100 MB of blank lines once took 2.5 GB and 27 s to parse, and a 20 MB line was kept whole as
the message (stored in the status twice and again in the sink). Now only the log's tail is read,
each value, key and message is held to a bound, and a bounded result says so in its message.
Sizes here are asserted on what is kept, never on time.
"""

from __future__ import annotations

import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.contract.bounds import (
    KEY_BYTES,
    LOG_TAIL_BYTES,
    MAX_NAMES,
    MAX_REJECTED,
    MESSAGE_BYTES,
    VALUE_BYTES,
    log_tail,
    stream_tail,
)
from glimmer.contract.parse import parse
from glimmer.contract.vocab import Comparison, Phase, Threshold
from glimmer.verdict import gate_outcome

NOTE = "runner output over the contract's bounds"


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def test_a_log_over_the_bound_is_read_from_its_tail_and_the_message_says_so() -> None:
    log = b"early=1\n" + b"pad\n" * (LOG_TAIL_BYTES // 4) + b"late=2\nall done\n"
    parsed = parse("custom", log, 0)
    assert parsed.metrics == {"late": "2"}  # early fell in the cut head: absent, not guessed
    assert parsed.message.startswith("all done [" + NOTE)
    assert f"last {LOG_TAIL_BYTES} of its {len(log)} bytes" in parsed.message


def test_a_gate_on_a_name_only_the_cut_head_held_fails_closed() -> None:
    log = b"miscompares=0\n" + b"x\n" * LOG_TAIL_BYTES
    parsed = parse("gpu-burn", log, 0)
    gate = Threshold("miscompares", Comparison.EQUAL, "0")
    outcome = gate_outcome(parsed.metrics, parsed.unmeasurable, [gate])
    assert outcome.phase is Phase.FAILED
    assert "was not reported" in outcome.message


def test_the_tail_starts_at_a_line_boundary_so_no_half_line_is_read() -> None:
    assert log_tail(b"abc=123456\nxyz=1\n", limit=8).data == b"xyz=1\n"
    assert log_tail(b"ab\ncd\n", limit=3).data == b"cd\n"  # the cut falls on a boundary
    assert log_tail(b"one long line\n", limit=5).data == b""
    tail = log_tail("é" * 10 + "\nok\n", limit=5)
    assert (tail.data, tail.total_bytes, tail.cut) == (b"ok\n", 24, True)
    assert not log_tail("small=1\n").cut


def test_a_value_over_its_bound_is_kept_cut_and_fails_its_gate_as_not_numeric() -> None:
    log = "miscompares=" + "0" * (VALUE_BYTES * 20) + "\ndone\n"
    parsed = parse("gpu-burn", log, 0)
    kept = parsed.metrics["miscompares"]
    assert _size(kept) <= VALUE_BYTES + 64
    assert kept.endswith(f"(cut at {VALUE_BYTES} of {VALUE_BYTES * 20} bytes)")
    assert "cut 1 value(s)" in parsed.message and "miscompares" in parsed.message
    gate = Threshold("miscompares", Comparison.EQUAL, "0")
    outcome = gate_outcome(parsed.metrics, parsed.unmeasurable, [gate])
    assert outcome.phase is Phase.FAILED and "is not numeric" in outcome.message


def test_a_later_short_reading_of_a_cut_value_stands_as_printed() -> None:
    parsed = parse("custom", "x=" + "9" * 5000 + "\nx=2\nok\n", 0)
    assert parsed.metrics == {"x": "2"}
    assert parsed.message == "ok"


def test_a_twenty_megabyte_last_line_is_kept_to_the_message_bound() -> None:
    line = "E" * (20 * 1024 * 1024)
    parsed = parse("custom", "a=1\n" + line + "\n", 3)
    # The line is longer than the whole tail: none of it is read, since a part of a line could
    # read as a different key or number. The message says why there are no last words.
    assert _size(parsed.message) < MESSAGE_BYTES
    assert parsed.message.startswith("[" + NOTE)
    assert parsed.metrics == {}


def test_a_long_last_line_within_the_log_bound_is_cut_to_the_message_bound() -> None:
    parsed = parse("custom", "a=1\n" + "é" * MESSAGE_BYTES + "\n", 0)
    assert _size(parsed.message) < MESSAGE_BYTES + 512
    assert f"cut its last line from {2 * MESSAGE_BYTES} to {MESSAGE_BYTES} bytes" in parsed.message


def test_a_key_over_its_bound_is_a_rejected_name_listed_cut() -> None:
    parsed = parse("custom", "a" * (KEY_BYTES * 100) + "=1\n", 0)
    assert parsed.metrics == {}
    (rejected,) = parsed.invalid_names
    assert _size(rejected) <= KEY_BYTES + 3
    assert f"refused 1 key(s) over {KEY_BYTES} bytes" in parsed.message


def test_names_past_the_distinct_name_bound_are_dropped_and_counted() -> None:
    log = "".join(f"m{i}=1\n" for i in range(MAX_NAMES + 10)) + "m0=2\n"
    parsed = parse("custom", log, 0)
    assert len(parsed.metrics) == MAX_NAMES
    assert parsed.metrics["m0"] == "2"  # names already held still take later readings
    assert f"m{MAX_NAMES}" not in parsed.metrics
    assert f"dropped 10 name(s) past the first {MAX_NAMES}" in parsed.message


def test_rejected_names_are_listed_to_their_bound() -> None:
    parsed = parse("custom", "".join(f"_k{i}=1\n" for i in range(MAX_REJECTED * 3)), 0)
    assert len(parsed.invalid_names) == MAX_REJECTED
    assert f"listed only the first {MAX_REJECTED} rejected names" in parsed.message


def test_output_within_every_bound_is_parsed_without_a_note() -> None:
    parsed = parse("custom", "a=1\n" * 1000 + "fine\n", 0)
    assert parsed.message == "fine"


def test_parse_memory_does_not_grow_with_the_log() -> None:
    log = "\n" * (LOG_TAIL_BYTES * 8) + "a=1\n"
    tracemalloc.start()
    try:
        parsed = parse("custom", log, 0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert parsed.metrics == {"a": "1"}
    assert peak < 3 * LOG_TAIL_BYTES  # the log itself is 8x the bound


LONG_TEXT = st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=3 * VALUE_BYTES)


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(st.tuples(st.text(max_size=KEY_BYTES * 2), LONG_TEXT), max_size=6))
def test_nothing_kept_of_any_output_exceeds_its_bound(lines: list[tuple[str, str]]) -> None:
    log = "".join(f"{k}={v}\n{v}\n" for k, v in lines)
    parsed = parse("custom", log, 1)
    assert all(_size(v) <= VALUE_BYTES + 64 for v in parsed.metrics.values())
    assert all(_size(k) <= KEY_BYTES + 3 for k in parsed.invalid_names)
    assert _size(parsed.message) <= MESSAGE_BYTES + 1024


def test_a_skip_marker_only_the_cut_head_held_reads_as_an_undeclared_skip() -> None:
    log = b"NCCL_SKIP: no fabric\n" + b"x\n" * LOG_TAIL_BYTES
    parsed = parse("nccl", log, 2)
    assert parsed.undeclared_skip
    assert NOTE in parsed.message


@settings(max_examples=200)
@given(
    data=st.text(alphabet="ab\n", max_size=200).map(str.encode),
    limit=st.integers(min_value=1, max_value=40),
    piece=st.integers(min_value=1, max_value=17),
)
def test_a_streamed_log_is_cut_exactly_like_a_whole_one(
    data: bytes, limit: int, piece: int
) -> None:
    chunks = [data[i : i + piece] for i in range(0, len(data), piece)]
    assert stream_tail(chunks, limit) == log_tail(data, limit)
