"""What a pinned plan says about itself, as conditions the engine sets at markRunning (§2.5):

* ``ThresholdsSound`` — the linter's review of the plan's gates. True means no gate is written
  so that it passes or fails for the wrong reason; it is explicitly not a claim that the values
  are calibrated. False names up to 5 unsound gates (as many as fit in 1024 bytes), then
  "and N more". Unsound gates never stop a run (malformed ones refused it already).
* ``PlanExpanded`` — only when variants expanded an entry into cells: how many entries became
  how many planned tests, how many (test, node) executions that is, and the cap they run under.
"""

from __future__ import annotations

from datetime import datetime

from glimmer.api.k8s import Condition
from glimmer.api.pinned import PlanDocument
from glimmer.plan.build import describe_problems, gate_problems
from glimmer.plan.conditions import (
    MAX_CONDITION_MESSAGE_BYTES,
    REVIEWED,
    UNSOUND_THRESHOLDS,
    VARIANTS_EXPANDED,
    condition,
)
from glimmer.plan.units import PlanUnits
from glimmer.verdict.lint import MAX_ADVISED, Severity
from glimmer.verdict.text import plural


def thresholds_sound(plan: PlanDocument, now: datetime, generation: int | None) -> Condition:
    """The ThresholdsSound condition of ``plan``."""
    unsound = gate_problems(plan.tests, Severity.UNSOUND)
    if not unsound:
        gates = sum(len(t.spec.thresholds or ()) for t in plan.tests)
        message = (
            f"the linter found no unsound gate among the plan's {gates} "
            f"{plural(gates, 'threshold')}; this reviews how the gates are written, not "
            "whether their values are calibrated for this hardware"
        )
        return condition(REVIEWED, message, now, generation)
    count = len(unsound)
    lead = (
        f"{count} unsound {plural(count, 'threshold')} (the run proceeds, but "
        f"{plural(count, 'this gate', 'these gates')} can pass or fail for the wrong reason): "
    )
    # Name up to 5, but only as many as fit the condition's 1024 bytes, so that the count of
    # the rest survives the clamp; a single over-long one is clamped.
    for limit in range(MAX_ADVISED, 0, -1):
        message = lead + describe_problems(unsound, limit)
        if len(message.encode()) <= MAX_CONDITION_MESSAGE_BYTES:
            break
    return condition(UNSOUND_THRESHOLDS, message, now, generation)


def node_executions(plan: PlanDocument) -> int:
    """How many (test, node) executions the plan holds: a Node test runs once on every distinct
    target (a (test, node) result is one unit, however often the node is named), a Pair test on
    its two ends, a Group test on every target (:mod:`glimmer.plan.units`)."""
    return PlanUnits(plan).executions


def plan_expanded(
    plan: PlanDocument, cap: int, now: datetime, generation: int | None
) -> Condition | None:
    """The PlanExpanded condition, or None when no entry had variants."""
    if not any(test.parent is not None for test in plan.tests):
        return None
    entries, tests = len(plan.profile_entries), len(plan.tests)
    units = PlanUnits(plan)
    executions, nodes = units.executions, len(units.distinct)
    message = (
        f"{entries} profile {plural(entries, 'entry', 'entries')} expanded to {tests} planned "
        f"{plural(tests, 'test')}: {executions} node {plural(executions, 'execution')} over "
        f"{nodes} target {plural(nodes, 'node')}, at most {cap} at "
        "once (maxConcurrentNodes)"
    )
    return condition(VARIANTS_EXPANDED, message, now, generation)
