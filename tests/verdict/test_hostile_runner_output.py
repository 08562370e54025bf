"""No runner output, however hostile, raises out of the contract or verdict layers (issue 10).

A value that cannot be read as a finite float64 fails its gate closed. Before this held, a
runner printing ``miscompares=0x1p1024`` made the number reader raise ``OverflowError``, and the
run stayed Running with its nodes cordoned: every fresh engine raised again on the same log.
The properties walk the whole path a log takes: stdout -> parse -> harvest -> evaluate ->
segment fold and abortEarly -> pair and group combination -> the attempt's settlement.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.contract.parse import parse
from glimmer.contract.vocab import Comparison, ParsedResult, Phase, Threshold
from glimmer.verdict import (
    UnitState,
    combine_group,
    combine_pair,
    complete_attempt,
    fold_metrics,
    gate_outcome,
    harvest,
    provable_violations,
)
from glimmer.verdict.attempts import Step
from glimmer.verdict.numbers import read_float

# Names chosen so every fold (Sum, Min, Max, Last) and every rank election (Sum, Max, Min,
# Collective, unclassified) actually computes with the hostile value.
NAMES = st.sampled_from(
    [
        "miscompares",  # Sum / Sum
        "elapsedS",  # Sum / Max
        "bandwidthGbps",  # Min / Min
        "busBandwidthGBs",  # Min / Collective
        "latencyUs",  # Max / Max
        "eccErrors",  # Last / Sum
        "meanPowerW",  # Max / unclassified
        "customScore",  # unregistered
    ]
)

# Spellings at the edges of float64: over and under the range, in hex and decimal, specials,
# Go-only syntax (underscores), and digit strings long enough to be slow to read.
EDGES = st.sampled_from(
    [
        "0x1p1024", "-0x1p1024", "0x1p99999999999999999999", "0x1.fffffffffffffp1023",
        "0x1_0p1020", "0x1p-1080", "0x.8p1025", "1e400", "-1e400", "1e-400", "1.8e308",
        "1.7976931348623157e308", "NaN", "nan", "-NaN", "+Inf", "-Infinity", "inf", "0x", "1_",
        "_1", "1__0", "0x_1p0", "0x1p", "", "n/a", "9" * 400, "0." + "0" * 400 + "1",
    ]
)  # fmt: skip
NUMBERISH = (
    st.from_regex(r"[+-]?0[xX][0-9a-fA-F_.]{1,6}[pP][+-]?[0-9_]{1,25}", fullmatch=True)
    | st.from_regex(r"[+-]?[0-9_.]{1,8}([eE][+-]?[0-9_]{1,25})?", fullmatch=True)
    | EDGES
)
VALUES = NUMBERISH | st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=12)
COMPARISONS = st.sampled_from([*(c.value for c in Comparison), "Bogus"])
GATES = st.lists(
    st.builds(Threshold, metric=NAMES, comparison=COMPARISONS, value=NUMBERISH),
    min_size=1,
    max_size=4,
)
EXIT_CODES = st.sampled_from([0, 0, 0, 1, 2, 3, 137, -1])


@st.composite
def runner_logs(draw: st.DrawFn) -> str:
    lines = draw(st.lists(st.tuples(NAMES, VALUES), max_size=12))
    body = "\n".join(f"{name}={value}" for name, value in lines)
    return body + "\n" + draw(st.sampled_from(["", "done", "NCCL_SKIP: no fabric", "PASS"]))


def _settle(parsed: ParsedResult, gates: list[Threshold], segments: int) -> Step:
    state = UnitState(segments_required=segments, segment_seconds=60 if segments else 0)
    step = complete_attempt(state, parsed, gates, attempt_number=1, retry_limit=0, abort_early=True)
    # A second window folds the first one's aggregate with new hostile readings.
    if not step.done:
        step = complete_attempt(
            step.state, parsed, gates, attempt_number=2, retry_limit=0, abort_early=True
        )
    return step


@settings(max_examples=400, deadline=None)
@given(
    log=runner_logs(),
    code=EXIT_CODES,
    gates=GATES,
    segments=st.sampled_from([0, 2, 3]),
)
def test_no_runner_output_raises_from_stdout_to_settlement(
    log: str, code: int, gates: list[Threshold], segments: int
) -> None:
    parsed = harvest(parse("custom", log, code), reason="Completed", detail="")
    step = _settle(parsed, gates, segments)
    assert step.attempt.phase in set(Phase)
    provable_violations(parsed.metrics, parsed.unmeasurable, gates)


@settings(max_examples=300, deadline=None)
@given(
    logs=st.lists(runner_logs(), min_size=2, max_size=4),
    codes=st.lists(EXIT_CODES, min_size=4, max_size=4),
    gates=GATES,
)
def test_no_runner_output_raises_when_ends_and_ranks_are_combined(
    logs: list[str], codes: list[int], gates: list[Threshold]
) -> None:
    ranks = [parse("nccl", log, code) for log, code in zip(logs, codes, strict=False)]
    nodes = [f"node-{i}" for i in range(len(ranks))]
    for combined in (
        combine_pair(nodes[0], nodes[1], ranks[0], ranks[1]),
        combine_group(nodes, ranks),
    ):
        _settle(combined, gates, 0)
        _settle(combined, gates, 2)


@settings(max_examples=300, deadline=None)
@given(aggregate=st.dictionaries(NAMES, NUMBERISH), window=st.dictionaries(NAMES, NUMBERISH))
def test_folding_hostile_windows_never_raises(
    aggregate: dict[str, str], window: dict[str, str]
) -> None:
    folded = fold_metrics(aggregate, window)
    assert folded.keys() == aggregate.keys() | window.keys()


@given(text=NUMBERISH)
def test_reading_number_shaped_text_never_raises(text: str) -> None:
    read_float(text)


def test_a_value_too_large_for_a_float64_fails_its_gate_closed_instead_of_raising() -> None:
    gate = Threshold("miscompares", Comparison.LESS_THAN_OR_EQUAL, "0")
    parsed = parse("gpu-burn", "miscompares=0x1p1024\ndone\n", 0)
    outcome = gate_outcome(parsed.metrics, parsed.unmeasurable, [gate])
    assert outcome.phase is Phase.FAILED
    assert outcome.violations[0].metric == "miscompares"
    assert "is not numeric" in outcome.violations[0].reason
