"""What becomes of the source profile's gates that no derived gate replaces.

A derived gate replaces the source's gate on the same metric. A source gate on a metric the
rule made no gate for (a counter healthy parts accumulate, such as a soak's watched windows; a
product with too few units) is **kept** when every clean unit passes it: automation never
quietly removes a protective gate. It is **dropped** when one does not (a spec-sheet number
that fails healthy parts, the lesson of specs/burnin.md §12) or when the linter finds fault
with it (the output must lint clean); either way the reason is kept for the review.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.api.threshold import Threshold
from glimmer.baseline.collect import TestSamples
from glimmer.baseline.guarantee import first_failure
from glimmer.verdict.lint import lint_thresholds


@dataclass(frozen=True)
class SourceGate:
    """A source gate that no derived gate replaces: kept or dropped, and why."""

    threshold: Threshold
    kept: bool
    reason: str


def judge(
    gate: Threshold,
    *,
    kind: str,
    samples: TestSamples | None,
    declined: str | None,
    keep: bool = True,
) -> SourceGate:
    """Keep or drop one source gate. ``declined`` is why the rule made no gate of its metric
    (None when the metric was not measured); ``keep`` False drops every source gate."""
    if not keep:
        return SourceGate(gate, False, "source gates dropped on request (--drop-source-gates)")
    problems = lint_thresholds([gate.to_contract()], kind)
    if problems:
        return SourceGate(gate, False, f"the linter: {problems[0].reason}")
    failure = first_failure([gate], samples)
    if failure is not None:
        return SourceGate(gate, False, f"it fails {failure}")
    if samples is None:
        return SourceGate(gate, True, "no baseline results to derive from or check it against")
    clean = sum(1 for m in samples.results if m.clean)
    return SourceGate(
        gate,
        True,
        f"the rule made no gate ({declined or 'not measured'}); all {clean} clean unit(s) pass it",
    )
