"""From one harvested execution to a phase: the single decision point of every scope (§2.11b).

Three steps, each a pure function the engine calls in this order:

1. :func:`harvest` folds the kubelet's account of an abnormal termination into the parsed
   result (§2.7a), so "OOMKilled" survives next to the runner's last words;
2. :func:`apply_log_fetch_rule` turns a Pass whose log could not be read into an Error when a
   gate would otherwise fail on a metric nobody could see (§2.7);
3. :func:`attempt_outcome` decides the attempt's phase and message, evaluating the gates via
   :func:`gate_outcome` for a clean exit.

Pair and Group results go through the same steps after :mod:`glimmer.verdict.pair` or
:mod:`glimmer.verdict.group` has combined their ends into one parsed result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from glimmer.contract.vocab import ParsedResult, Phase, RunnerVerdict, Threshold
from glimmer.verdict.evaluate import NotEvaluated, Violation, evaluate
from glimmer.verdict.text import clamp_marked, flatten, name_some, plural, quote

MAX_POD_DETAIL_BYTES = 512  # Appendix A: kubelet message kept
MAX_NAMED_INVALID_NAMES = 8  # Appendix A: rejected metric names named by the operator

DEADLINE_EXCEEDED = "DeadlineExceeded"
DEADLINE_MESSAGE = "test exceeded its deadline and was killed — no verdict"

UNDECLARED_SKIP_MESSAGE = (
    "runner exited 2 (the skip code) without declaring a skip — no *_SKIP marker line was "
    "printed, and a crashed runner (a Go panic or runtime fatal error) exits 2 too, so the "
    "hardware is UNJUDGED, not out of scope"
)

_VERDICT_PHASE: Mapping[RunnerVerdict, Phase] = {
    RunnerVerdict.PASS: Phase.PASSED,
    RunnerVerdict.FAIL: Phase.FAILED,
    RunnerVerdict.SKIP: Phase.SKIPPED,
    RunnerVerdict.ERROR: Phase.ERROR,
}


@dataclass(frozen=True)
class AttemptOutcome:
    """What one execution (or one combined Pair/Group execution) settles to.

    ``metrics`` are the execution's own readings; ``unmeasurable`` is always carried, sorted.
    """

    phase: Phase
    message: str
    metrics: Mapping[str, str]
    violations: tuple[Violation, ...] = ()
    not_evaluated: tuple[NotEvaluated, ...] = ()
    unmeasurable: tuple[str, ...] = ()


def _join(*parts: str) -> str:
    """Join the non-empty parts with single spaces."""
    return " ".join(p for p in parts if p)


def _bracket(text: str) -> str:
    return f"[{text}]" if text else ""


def runner_said(message: str) -> str:
    """`` [runner said: <last line>]`` as a bracket, or empty when the runner said nothing."""
    return _bracket(f"runner said: {message}") if message else ""


def abnormal_account(exit_code: int, reason: str, detail: str) -> str:
    """The kubelet's account of an abnormal termination, detail flattened and clamped."""
    account = f"runner terminated abnormally (exit {exit_code}, reason {quote(reason)})"
    flat = flatten(detail)
    if flat:
        account += ": " + clamp_marked(flat, MAX_POD_DETAIL_BYTES)
    return account


def harvest(parsed: ParsedResult, *, reason: str = "", detail: str = "") -> ParsedResult:
    """Fold the termination's pod/container ``reason`` and kubelet ``detail`` into a parse.

    A pod killed at its deadline is always an Error with a fixed message, whatever the
    container's exit code said. For any other Error the abnormal-termination account becomes
    the message when the runner printed none, and is appended in brackets when it printed
    something and the exit code is outside 0..3 (a runner that chose exit 3 speaks for itself).
    """
    if reason == DEADLINE_EXCEEDED:
        return dataclasses.replace(
            parsed, verdict=RunnerVerdict.ERROR, undeclared_skip=False, message=DEADLINE_MESSAGE
        )
    if parsed.verdict is not RunnerVerdict.ERROR:
        return parsed
    account = abnormal_account(parsed.exit_code, reason, detail)
    if not parsed.message:
        return dataclasses.replace(parsed, message=account)
    if not 0 <= parsed.exit_code <= 3:
        return dataclasses.replace(parsed, message=f"{parsed.message} [{account}]")
    return parsed


def apply_log_fetch_rule(
    parsed: ParsedResult, thresholds: Sequence[Threshold], log_error: str | None
) -> ParsedResult:
    """When the log could not be fetched, a Pass cannot be judged against gates it cannot see.

    If ``log_error`` is set, the runner exited clean, gates exist, and some gated metric is
    neither reported nor declared ``n/a``, the result is an Error (retryable) instead of a
    fail-closed verdict against hardware that may be fine.
    """
    if log_error is None or parsed.verdict is not RunnerVerdict.PASS or not thresholds:
        return parsed
    seen = parsed.metrics.keys() | parsed.unmeasurable
    if all(gate.metric in seen for gate in thresholds):
        return parsed
    return dataclasses.replace(
        parsed,
        verdict=RunnerVerdict.ERROR,
        message=f"runner logs unavailable ({log_error}) — thresholds cannot be evaluated; "
        "no verdict",
    )


def gate_outcome(
    metrics: Mapping[str, str],
    unmeasurable: Iterable[str],
    thresholds: Sequence[Threshold],
    said: str = "",
) -> AttemptOutcome:
    """Evaluate the gates over one set of readings and phrase the result.

    Failed: the first violation's reason, the runner's last line and a summary of the other
    violations, each bracketed. Passed: the runner's last line. Either way the gates that were
    not evaluated are named in a trailing bracket.
    """
    declared = frozenset(unmeasurable)
    result = evaluate(metrics, declared, thresholds)
    not_evaluated = _bracket(result.not_evaluated_message())
    if result.passed:
        phase = Phase.PASSED
        message = _join(said, not_evaluated)
    else:
        phase = Phase.FAILED
        message = _join(
            result.message, _bracket(said), _bracket(result.violation_summary()), not_evaluated
        )
    return AttemptOutcome(
        phase=phase,
        message=message,
        metrics=dict(metrics),
        violations=result.violations,
        not_evaluated=result.not_evaluated,
        unmeasurable=tuple(sorted(declared)),
    )


def _empty_harvest_message(gates: int, said: str) -> str:
    return _join(
        "runner exited 0 but reported no metrics at all — it measured nothing, so the test's "
        f"{gates} {plural(gates, 'threshold')} could not be evaluated; no verdict (a runner "
        "killed or evicted before it printed looks like this)",
        runner_said(said),
    )


def invalid_names_addendum(names: Sequence[str], limit: int = MAX_NAMED_INVALID_NAMES) -> str:
    """``[runner emitted N metric name(s) the contract rejects: a, b, …, and M more]``.

    The operator names 8; the bare-metal CLI names 5 (Appendix A) and passes ``limit``.
    """
    distinct = list(dict.fromkeys(names))
    if not distinct:
        return ""
    count = len(distinct)
    return _bracket(
        f"runner emitted {count} metric {plural(count, 'name')} the contract rejects: "
        + name_some(distinct, limit)
    )


def attempt_outcome(
    parsed: ParsedResult, thresholds: Sequence[Threshold], *, segmented: bool
) -> AttemptOutcome:
    """Decide one execution's phase from what its runner declared (§2.11b).

    * Pass with gates but not one ``key=value`` line is an Error (retryable): a runner killed
      before it printed looks exactly like this. Otherwise a Pass is judged by its gates,
      except in a segmented soak, whose gates are judged only over the aggregate.
    * Fail is honoured as the runner's own measured finding, even with no metrics.
    * Skip (declared with a marker) is Skipped.
    * Anything else is an Error; an undeclared exit 2 gets a fixed explanation.

    Rejected metric names are appended to the message on every phase.
    """
    unmeasurable = tuple(sorted(parsed.unmeasurable))
    said = parsed.message
    verdict = parsed.verdict
    if verdict is RunnerVerdict.PASS and thresholds and parsed.reported_nothing():
        outcome = AttemptOutcome(
            Phase.ERROR,
            _empty_harvest_message(len(thresholds), said),
            dict(parsed.metrics),
            unmeasurable=unmeasurable,
        )
    elif verdict is RunnerVerdict.PASS and not segmented:
        outcome = gate_outcome(parsed.metrics, parsed.unmeasurable, thresholds, said)
    elif verdict is RunnerVerdict.ERROR and parsed.undeclared_skip:
        outcome = AttemptOutcome(
            Phase.ERROR,
            _join(UNDECLARED_SKIP_MESSAGE, runner_said(said)),
            dict(parsed.metrics),
            unmeasurable=unmeasurable,
        )
    else:
        # Pass of one soak segment, Fail, Skip and Error keep the runner's own words.
        phase = _VERDICT_PHASE.get(verdict, Phase.ERROR)
        outcome = AttemptOutcome(phase, said, dict(parsed.metrics), unmeasurable=unmeasurable)
    addendum = invalid_names_addendum(parsed.invalid_names)
    if addendum:
        outcome = dataclasses.replace(outcome, message=_join(outcome.message, addendum))
    return outcome
