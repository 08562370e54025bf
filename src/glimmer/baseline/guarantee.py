"""The derivation's promise, checked rather than assumed: no clean unit measured in the
baseline fails a gate of the output.

The rule is built to keep it (the worst-clean clamp, the outward rounding), and the property
tests hold the rule to it; this check holds the whole derivation to it, with the evaluation a
run would use (:func:`glimmer.verdict.evaluate.evaluate`), so a gate that would fail a healthy
part is caught before any profile is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from glimmer.api.threshold import Threshold
from glimmer.baseline.collect import TestSamples
from glimmer.errors import GlimmerError
from glimmer.verdict.evaluate import evaluate


class GuaranteeBroken(GlimmerError):
    """A gate of the output would fail a clean unit it was derived from (a bug in the rule)."""


def first_failure(gates: Sequence[Threshold], samples: TestSamples | None) -> str | None:
    """The first clean unit ``gates`` fail, with the reason, or None when every one passes."""
    contract = [g.to_contract() for g in gates]
    for measured in samples.results if samples is not None else []:
        if not measured.clean:
            continue
        outcome = evaluate(measured.metrics, measured.unmeasurable, contract)
        if not outcome.passed:
            return f"clean unit {measured.unit}: {outcome.message}"
    return None


def check(test: str, gates: Sequence[Threshold], samples: TestSamples | None) -> None:
    """Raise GuaranteeBroken when ``gates`` fail a clean unit of ``samples``."""
    failure = first_failure(gates, samples)
    if failure is not None:
        raise GuaranteeBroken(f"a gate of test {test} fails {failure}")
