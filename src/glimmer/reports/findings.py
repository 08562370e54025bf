"""The findings of a run: every unit that did not pass, with the gates its readings miss.

Read from the run object alone. A unit is a node, or a whole Pair/Group unit (a link verdict is
never split per node); its evidence is the gates its readings miss (from
``glimmer.verdict.evidence``), else the runner's own message speaks for it. The terminal verdict
table of ``glimmer run`` and the HTML report's findings table both read this one list, so they
never disagree. Formatting only: no rule is restated here.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.api.pinned import PLAN_ANNOTATION, PlanDocument, PlanError, decode_plan
from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.api.threshold import to_contract
from glimmer.contract.vocab import Phase, Scope
from glimmer.verdict.evidence import GateEvidence, RecordedViolation, gate_evidence
from glimmer.verdict.text import flatten

# The gate as written, and the relation a reading that misses it stands in.
GATE_SYMBOL = {"GreaterThanOrEqual": ">=", "LessThanOrEqual": "<=", "Equal": "==", "NotEqual": "!="}
MISS_SYMBOL = {"GreaterThanOrEqual": "<", "LessThanOrEqual": ">", "Equal": "!=", "NotEqual": "=="}
NOT_PASSED = (Phase.FAILED, Phase.ERROR, Phase.CANCELLED)


@dataclass(frozen=True)
class Finding:
    """One unit that did not pass: where, which test, the evidence and the message."""

    unit: str  # a node, "a <-> b" for a link, "group of N (first …)" for a collective
    test: str
    phase: Phase
    evidence: tuple[GateEvidence, ...]
    message: str


def plan_of(run: BurnInRun) -> PlanDocument | None:
    """The run's pinned plan, or None when it has none (refused before planning)."""
    value = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
    if value is None:
        return None
    try:
        return decode_plan(value)
    except PlanError:
        return None


def unit_label(result: TestResult) -> str:
    """A node for a Node result; the link or the collective for Pair and Group."""
    nodes = result.nodes or []
    scope = result.scope
    if scope is Scope.PAIR and len(nodes) == 2:
        return f"{nodes[0]} <-> {nodes[1]}"
    if scope is Scope.GROUP:
        return f"group of {len(nodes)} ({nodes[0] if nodes else '-'} …)"
    return nodes[0] if nodes else "(run)"


def cell_message(finding: Finding) -> str:
    """The message without a Pair/Group verdict's preamble (the unit is the row already)."""
    text = finding.message
    if text.startswith(("pair ", "group of ")) and "): " in text:
        return text.split("): ", 1)[1]
    return text


def evidence_of(result: TestResult, plan: PlanDocument | None) -> tuple[GateEvidence, ...]:
    """The gates this result's readings miss (recorded violations first)."""
    planned = next((t for t in plan.tests if t.name == result.name), None) if plan else None
    gates = to_contract(planned.spec.thresholds) if planned is not None else ()
    recorded = [
        RecordedViolation(v.index, v.metric, v.kind or "", v.reason or "")
        for v in result.violations or ()
    ]
    cut_short = (result.segments_completed or 0) < (result.segments_required or 0)
    found = gate_evidence(
        result.metrics or {}, result.unmeasurable or (), gates, recorded, cut_short=cut_short
    )
    return tuple(found)


def reading_text(item: GateEvidence) -> str:
    """``19.54 < 70 sustainedClockPct``; ``sustainedClockPct not reported`` and the like."""
    if item.reading is None or item.comparison not in MISS_SYMBOL:
        return f"{item.metric} {item.kind or 'violated'}".strip()
    return f"{item.reading} {MISS_SYMBOL[item.comparison]} {item.bound} {item.metric}"


def gate_text(item: GateEvidence) -> str:
    """The gate as ``>= 70``; empty when the gate is not known."""
    symbol = GATE_SYMBOL.get(item.comparison)
    return f"{symbol} {item.bound}" if symbol else ""


def finding_of(result: TestResult, plan: PlanDocument | None) -> Finding | None:
    """The finding of one result, or None when it passed (or has not finished)."""
    if result.phase not in NOT_PASSED:
        return None
    return Finding(
        unit="(run)" if result.synthetic else unit_label(result),
        test=result.name,
        phase=result.phase,
        evidence=evidence_of(result, plan),
        message=flatten(result.message or ""),
    )


def findings(run: BurnInRun, plan: PlanDocument | None = None) -> list[Finding]:
    """Every unit that did not pass, in the order of the status (``plan``: the run's pinned
    plan when the caller has decoded it already)."""
    plan = plan if plan is not None else plan_of(run)
    out = []
    for result in (run.status.results if run.status else None) or ():
        found = finding_of(result, plan)
        if found is not None:
            out.append(found)
    return out
