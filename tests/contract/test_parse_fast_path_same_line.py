"""The parser's fast path for plain ASCII ``key=value`` lines (issue 12) reads every line as the
contract's rules do: whatever the line, what it says is the same whichever way it is read."""

from hypothesis import example, given, settings
from hypothesis import strategies as st

from glimmer.contract.bounds import KEY_BYTES, VALUE_BYTES
from glimmer.contract.kinds import BUILT_IN
from glimmer.contract.parse import (
    _INTERNED_VALUE_BYTES,
    _read_line,
    _read_plain,
    _read_rules,
    parse,
)

KINDS = st.sampled_from([*BUILT_IN, "custom", ""])

# The fast path's edges: whitespace Go trims and Python's strip would not (and the reverse),
# control characters, the sentinel, '=' in values, bounds of keys and values.
FRAGMENTS = st.sampled_from(
    [
        "=", "==", "n/a", "N/A", " ", "\t", "\r", "\v", "\f", "\x1c", "\x1f", "\x00", "\x7f",
        "\x85", "\xa0", "\u2003", "\u3000", "_", "-", ".", "a", "Z", "0", "busbw", "gpu_temp_c",
        "tflops", "xid_count", "gpuTempC", "é", "\ud800", "\ufffd", "a" * (KEY_BYTES - 1),
        "9" * _INTERNED_VALUE_BYTES, "x" * VALUE_BYTES,
    ]
)  # fmt: skip
LINES = st.lists(FRAGMENTS | st.text(max_size=6), max_size=24).map("".join)
PLAIN_KEYS = st.from_regex(r"[a-z][a-zA-Z0-9_\-]{0,40}", fullmatch=True)
PLAIN_VALUES = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1)


def _same(kind: str, raw: bytes) -> None:
    assert _read_line(kind, raw) == _read_rules(kind, raw)


@settings(max_examples=600)
@given(kind=KINDS, line=LINES)
@example(kind="gpu-burn", line="gpuTempC=71")
@example(kind="gpu-burn", line="gpuTempC=")
@example(kind="gpu-burn", line="=71")
@example(kind="gpu-burn", line="gpuTempC= 71")
@example(kind="gpu-burn", line="gpuTempC =71")
@example(kind="gpu-burn", line="gpuTempC=71\x1f")
@example(kind="gpu-burn", line="\x1fgpuTempC=71")
@example(kind="gpu-burn", line="gpuTempC=N/a")
@example(kind="gpu-burn", line="gpu\ttemp=1")
@example(kind="gpu-burn", line="a=b=c")
@example(kind="gpu-burn", line="a" * KEY_BYTES + "=1")
@example(kind="gpu-burn", line="a" * (KEY_BYTES + 1) + "=1")
@example(kind="gpu-burn", line="a=" + "1" * (_INTERNED_VALUE_BYTES + 1))
@example(kind="gpu-burn", line="a=" + "1" * (VALUE_BYTES + 1))
def test_a_line_says_the_same_whichever_way_it_is_read(kind: str, line: str) -> None:
    _same(kind, line.encode("utf-8", "surrogatepass"))


@settings(max_examples=300)
@given(kind=KINDS, raw=st.binary(max_size=300))
def test_arbitrary_bytes_say_the_same_whichever_way_they_are_read(kind: str, raw: bytes) -> None:
    _same(kind, raw)


@settings(max_examples=300)
@given(kind=KINDS, key=PLAIN_KEYS, value=PLAIN_VALUES)
def test_a_plain_metric_line_says_the_same_whichever_way_it_is_read(
    kind: str, key: str, value: str
) -> None:
    _same(kind, f"{key}={value}".encode())


def test_a_runners_plain_metric_line_takes_the_fast_path() -> None:
    said = _read_plain("gpu-burn", "gpu_temp_c=71")
    assert said is not None
    assert (said.name, said.value, said.value_bytes) == ("gpuTempC", "71", 2)


def test_a_line_needing_the_rules_is_left_to_them() -> None:
    for line in (" gpuTempC=71", "gpuTempC=n/a", "gpuTempC=", "bad.key=1", "a b=1", "message"):
        assert _read_plain("gpu-burn", line) is None


def test_an_output_of_plain_lines_parses_as_before() -> None:
    out = "gpu_temp_c=71\nbusbw_gbps=12.5\ngpuTempC=n/a\n  xid_count=0  \nall good\n"
    got = parse("gpu-burn", out, 0)
    assert got.metrics == {"busbwGbps": "12.5", "xidEvents": "0"}  # an alias, canonicalised
    assert got.unmeasurable == frozenset({"gpuTempC"})
    assert got.message == "all good"
