"""Properties of the parser that must hold on any input a runner (or a crash) can produce."""

from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.contract.kinds import BUILT_IN
from glimmer.contract.names import is_valid_metric_name
from glimmer.contract.parse import parse
from glimmer.contract.text import trim_space
from glimmer.contract.vocab import ParsedResult

KINDS = st.sampled_from([*BUILT_IN, "custom", "", "unknown-kind"]) | st.text(max_size=20)
EXIT_CODES = st.integers(min_value=-(2**63), max_value=2**63) | st.sampled_from([0, 1, 2, 3])

# Lines built from the contract's own vocabulary hit the interesting paths far more often than
# uniformly random text: fences, markers, sentinels, aliases, separators, CRs.
FRAGMENTS = st.sampled_from(
    [
        "=", "n/a", "N/A", " ", "\t", "\r", "_", "-", "a", "busbw", "tflops", "xid_count",
        "NCCL_SKIP", "_SKIP", "-----BEGIN BURNIN ARTIFACT", " a b", "-----",
        "-----END BURNIN ARTIFACT-----", "\n", "é", "\x00", "\ud800", "\ufffd", "gpuTempC",
    ]
)  # fmt: skip
VOCAB_TEXT = st.lists(FRAGMENTS | st.text(max_size=5), max_size=40).map("".join)


def _check_shape(r: ParsedResult) -> None:
    assert not set(r.metrics) & r.unmeasurable
    assert all(is_valid_metric_name(n) for n in r.metrics)
    assert all(is_valid_metric_name(n) for n in r.unmeasurable)
    assert "\n" not in r.message


@settings(max_examples=300)
@given(kind=KINDS, data=st.binary(max_size=2048), code=EXIT_CODES)
def test_parse_never_raises_on_arbitrary_bytes(kind: str, data: bytes, code: int) -> None:
    _check_shape(parse(kind, data, code))


@settings(max_examples=300)
@given(kind=KINDS, text=st.text(max_size=2048), code=EXIT_CODES)
def test_parse_never_raises_on_arbitrary_text(kind: str, text: str, code: int) -> None:
    _check_shape(parse(kind, text, code))


@settings(max_examples=500)
@given(kind=KINDS, text=VOCAB_TEXT, code=EXIT_CODES)
def test_parse_never_raises_on_contract_shaped_text(kind: str, text: str, code: int) -> None:
    _check_shape(parse(kind, text, code))


NAMES = st.from_regex(r"[a-z][a-zA-Z0-9]{0,12}", fullmatch=True)
# Lone surrogates are excluded: text is read as UTF-8, so they come back as U+FFFD (the
# never-raises properties above cover them).
VALUES = st.sampled_from(["n/a", "N/A", " n/a ", "\x1fn/a"]) | st.text(
    alphabet=st.characters(blacklist_characters="\n", blacklist_categories=["Cs"]), max_size=8
)


@given(st.lists(st.tuples(NAMES, VALUES), min_size=1, max_size=30))
def test_last_occurrence_wins(pairs: list[tuple[str, str]]) -> None:
    stdout = "".join(f"{name}={value}\n" for name, value in pairs)
    r = parse("custom", stdout, 0)
    last: dict[str, str] = {}
    for name, value in pairs:
        last[name] = trim_space(value)
    for name, value in last.items():
        if value.lower() == "n/a":
            assert name in r.unmeasurable and name not in r.metrics
        else:
            assert name not in r.unmeasurable
            assert r.metrics[name] == value


@given(kind=KINDS, text=VOCAB_TEXT, code=EXIT_CODES)
def test_a_value_na_never_ends_in_metrics(kind: str, text: str, code: int) -> None:
    r = parse(kind, text, code)
    assert all(v.lower() != "n/a" for v in r.metrics.values())
