"""The words every report format shares: status words, verdict marks, gate symbols, times.

One table each, so that JUnit, Markdown, HTML and NVVS never disagree about how a phase or a
gate reads.
"""

from __future__ import annotations

from datetime import UTC, datetime

from glimmer.contract.vocab import Comparison

# §6.3: the status words; an unknown phase is shown upper-cased rather than guessed at.
_WORDS = {
    "Passed": "PASS",
    "Failed": "FAIL",
    "Error": "ERROR",
    "Skipped": "SKIP",
    "Cancelled": "CANCELLED",
    "Running": "RUNNING",
    "Pending": "PENDING",
}

# A text mark beside every colour, so a verdict reads without colour vision or in print.
_MARKS = {
    "PASS": "✓",
    "FAIL": "✗",
    "ERROR": "!",
    "SKIP": "–",
    "CANCELLED": "⊘",
    "RUNNING": "…",
    "PENDING": "…",
}

# Which verdict speaks for a node with several results: the worst one, in this order.
SEVERITY = ("FAIL", "ERROR", "CANCELLED", "RUNNING", "PENDING", "PASS", "SKIP")

_SYMBOLS = {
    Comparison.GREATER_THAN_OR_EQUAL.value: "≥",
    Comparison.LESS_THAN_OR_EQUAL.value: "≤",
    Comparison.EQUAL.value: "=",
    Comparison.NOT_EQUAL.value: "≠",
}

DASH = "—"


def status_word(phase: str) -> str:
    """PASS, FAIL, ERROR …; any other phase upper-cased."""
    return _WORDS.get(phase, phase.upper() or "UNKNOWN")


def mark(word: str) -> str:
    """The text mark shown beside a status word's colour."""
    return _MARKS.get(word, "?")


def worst(words: list[str]) -> str | None:
    """The status word that speaks for several results (None when there are none)."""
    if not words:
        return None
    rank = {w: i for i, w in enumerate(SEVERITY)}
    return min(words, key=lambda w: rank.get(w, -1))


def symbol(comparison: str) -> str:
    """≥, ≤, = or ≠ for a comparison; an unknown comparison is shown as written."""
    return _SYMBOLS.get(comparison, comparison)


def utc(moment: datetime | None) -> str:
    """``2026-09-01 09:50:00 UTC``, or an em dash when the time is not known."""
    if moment is None:
        return DASH
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def duration(seconds: float) -> str:
    """``4h 01m``, ``5m 03s`` or ``31s``: a span short enough to read at a glance."""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"
