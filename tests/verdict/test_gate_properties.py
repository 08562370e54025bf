"""Properties of evaluation: non-finite never satisfies, nothing ever raises (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from glimmer.contract.vocab import Threshold
from glimmer.verdict.evaluate import Cause, evaluate

COMPARISONS = ["GreaterThanOrEqual", "LessThanOrEqual", "Equal", "NotEqual"]
APPLICABILITIES = ["", "Required", "RequiredIfMeasurable", "Bogus"]


def _case_variants(word: str) -> st.SearchStrategy[str]:
    return st.tuples(*[st.sampled_from([c.lower(), c.upper()]) for c in word]).map("".join)


non_finite_spellings = st.one_of(
    _case_variants("nan"),
    st.tuples(st.sampled_from(["", "+", "-"]), _case_variants("inf")).map("".join),
    st.tuples(st.sampled_from(["", "+", "-"]), _case_variants("infinity")).map("".join),
)

bounds = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-(10**6), 10**6).map(str),
)


@given(
    value=non_finite_spellings,
    comparison=st.sampled_from(COMPARISONS),
    applicability=st.sampled_from(APPLICABILITIES),
    bound=bounds,
)
def test_non_finite_metric_never_satisfies_any_gate(
    value: str, comparison: str, applicability: str, bound: str
) -> None:
    result = evaluate({"m": value}, set(), [Threshold("m", comparison, bound, applicability)])
    assert not result.passed
    assert result.violations[0].kind == "NonFinite"
    assert result.violations[0].cause == Cause.EVIDENCE


@given(
    metrics=st.dictionaries(st.text(max_size=8), st.text(max_size=12), max_size=6),
    unmeasurable=st.sets(st.text(max_size=8), max_size=4),
    gates=st.lists(
        st.builds(
            Threshold,
            st.text(max_size=8),
            st.one_of(st.sampled_from(COMPARISONS), st.text(max_size=6)),
            st.one_of(bounds, st.text(max_size=10)),
            st.sampled_from(APPLICABILITIES),
        ),
        max_size=6,
    ),
)
def test_evaluate_never_raises_and_accounts_for_every_gate(
    metrics: dict[str, str], unmeasurable: set[str], gates: list[Threshold]
) -> None:
    result = evaluate(metrics, unmeasurable, gates)
    indexes = [v.index for v in result.violations]
    assert indexes == sorted(set(indexes))
    assert all(0 <= i < len(gates) for i in indexes)
    assert result.passed is (not result.violations)
    if result.passed:
        assert len(result.not_evaluated) <= len(gates)
