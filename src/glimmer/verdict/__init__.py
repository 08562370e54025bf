"""glimmer.verdict: every verdict rule, once, as pure functions over the contract types.

The engine, the bare-metal dispatcher, the planner and the CLI all call these; none of them
restates a rule. Modules, one idea each:

* :mod:`.evaluate` — gates against one execution's readings (§4.2)
* :mod:`.lint` — gates (and tests) that can never mean what their author meant (§4.3)
* :mod:`.settle` — harvest account, log-fetch rule, attempt outcome (§2.7, §2.7a, §2.11b)
* :mod:`.attempts` — completing an attempt: repeat, retry, segment, settle (§2.11a, §2.12)
* :mod:`.pair` / :mod:`.group` — one verdict about a link / a collective (§2.8, §2.9)
* :mod:`.units` — which node sets a test's verdicts are about, per scope (a node named twice
  is one unit)
* :mod:`.fold` — segment folds and abortEarly (§2.12)
* :mod:`.run_phase` — the run's phase and counters (§2.11c)
* :mod:`.numbers` — reading and writing numbers as the Go original did
"""

from glimmer.verdict.attempts import Step, Trigger, UnitState, complete_attempt, next_trigger
from glimmer.verdict.evaluate import Cause, Evaluation, NotEvaluated, Violation, evaluate
from glimmer.verdict.fold import fold_metrics, fold_unmeasurable, provable_violations
from glimmer.verdict.group import combine_group
from glimmer.verdict.lint import Problem, Severity, TestDefinition, lint_test, lint_thresholds
from glimmer.verdict.pair import combine_pair
from glimmer.verdict.run_phase import ResultView, count_results, run_phase
from glimmer.verdict.settle import (
    AttemptOutcome,
    apply_log_fetch_rule,
    attempt_outcome,
    gate_outcome,
    harvest,
)

__all__ = [
    "AttemptOutcome",
    "Cause",
    "Evaluation",
    "NotEvaluated",
    "Problem",
    "ResultView",
    "Severity",
    "Step",
    "TestDefinition",
    "Trigger",
    "UnitState",
    "Violation",
    "apply_log_fetch_rule",
    "attempt_outcome",
    "combine_group",
    "combine_pair",
    "complete_attempt",
    "count_results",
    "evaluate",
    "fold_metrics",
    "fold_unmeasurable",
    "gate_outcome",
    "harvest",
    "lint_test",
    "lint_thresholds",
    "next_trigger",
    "provable_violations",
    "run_phase",
]
