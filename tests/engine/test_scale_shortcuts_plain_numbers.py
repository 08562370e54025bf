"""The verdict's shortcut for plain decimals (issue 12) reads every string as Go's rules do:
whatever the text, the reading is the same whichever way it is made."""

import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

from glimmer.verdict.numbers import Reading, _read_by_rules, read_float

FRAGMENTS = st.sampled_from(
    [
        "0", "1", "9", "00", "-", "+", ".", "_", "e", "E", "e-", "x", "0x", "p", "inf", "NaN",
        " ", "\t", "\n", "\u0660", "\uff11", "\u00b2", "1" * 400,
    ]
)  # fmt: skip
NUMBERISH = st.lists(FRAGMENTS, max_size=12).map("".join)
PLAIN = st.from_regex(r"-?[0-9]{1,30}(\.[0-9]{1,30})?", fullmatch=True)


def _same(text: str) -> None:
    got, want = read_float(text), _read_by_rules(text)
    if got.value is not None and math.isnan(got.value):
        assert want.value is not None and math.isnan(want.value)
    else:
        assert got == want


@settings(max_examples=500)
@given(text=NUMBERISH)
@example(text="71")
@example(text="-0")
@example(text="007.50")
@example(text="1" * 400)
@example(text="1" * 400 + ".5")
@example(text="71\n")
@example(text="\u0667\u0661")
@example(text="1.")
@example(text=".5")
def test_a_number_reads_the_same_whichever_way_it_is_read(text: str) -> None:
    _same(text)


@settings(max_examples=300)
@given(text=st.text(max_size=12))
def test_any_text_reads_the_same_whichever_way_it_is_read(text: str) -> None:
    _same(text)


@settings(max_examples=300)
@given(text=PLAIN)
def test_a_plain_decimal_reads_as_gos_rules_read_it(text: str) -> None:
    _same(text)


def test_a_plain_decimal_is_its_float_and_a_too_large_one_no_number() -> None:
    assert read_float("12.5") == Reading(12.5)
    assert read_float("-3") == Reading(-3.0)
    assert read_float("9" * 400) == Reading(None)  # Go: ErrRange
