"""The findings of a run for the terminal: they live in :mod:`glimmer.reports.findings`, which
the HTML report reads too, so the verdict table and the report never disagree."""

from glimmer.reports.findings import (
    GATE_SYMBOL,
    MISS_SYMBOL,
    NOT_PASSED,
    Finding,
    cell_message,
    evidence_of,
    findings,
    gate_text,
    plan_of,
    reading_text,
    unit_label,
)

__all__ = [
    "GATE_SYMBOL",
    "MISS_SYMBOL",
    "NOT_PASSED",
    "Finding",
    "cell_message",
    "evidence_of",
    "findings",
    "gate_text",
    "plan_of",
    "reading_text",
    "unit_label",
]
