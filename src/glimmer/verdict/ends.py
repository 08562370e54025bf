"""What Pair and Group combination share: precedence of runner verdicts and one end's summary."""

from __future__ import annotations

from collections.abc import Mapping

from glimmer.contract.vocab import ParsedResult, RunnerVerdict

# Across the ends of one link or collective an inability to judge outranks a finding: a Fail
# seen next to an Error may be the Error's side effect (Error > Fail > Skip > Pass).
PRECEDENCE: tuple[RunnerVerdict, ...] = (
    RunnerVerdict.ERROR,
    RunnerVerdict.FAIL,
    RunnerVerdict.SKIP,
    RunnerVerdict.PASS,
)

_WORD: Mapping[RunnerVerdict, str] = {v: v.value.lower() for v in RunnerVerdict}

NEVER_RAN_EXIT = -1  # the exit code recorded when no runner reported at all


def verdict_word(verdict: RunnerVerdict) -> str:
    """The lower-case word a summary uses for a runner verdict (``pass``, ``error`` …)."""
    return _WORD.get(verdict, str(verdict).lower())


def end_summary(label: str, parsed: ParsedResult | None) -> str:
    """How one end fared: ``<label> <verdict> (exit N): <last line>``.

    ``label`` names the end (``server n1``, ``rank 2 (n3)``). An end that never reported
    ``did not report``; an undeclared exit 2 is spelt out as the likely crash it is.
    """
    if parsed is None:
        return f"{label} did not report"
    if parsed.undeclared_skip:
        text = (
            f"{label} exited 2 without declaring a skip — likely a crashed runner, "
            "hardware unjudged"
        )
        return f"{text} [runner said: {parsed.message}]" if parsed.message else text
    text = f"{label} {verdict_word(parsed.verdict)} (exit {parsed.exit_code})"
    return f"{text}: {parsed.message}" if parsed.message else text
