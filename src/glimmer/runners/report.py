"""What a runner prints: ``key=value`` evidence lines, free text, then one marker line.

The three-state rule lives here: a value that could not be read is simply not printed (pass
``None``), a value the hardware positively cannot produce is printed as ``n/a``
(:meth:`Report.unmeasurable`), and anything else is a measurement. Every line is flushed as it is
written, so a runner killed halfway still leaves its evidence (and its breadcrumbs) in the log.

Free text is guarded so that the contract parser can never read it as a metric or as a marker:
a line whose text before its first ``=`` holds no space, or that starts like a marker, is
prefixed with ``note: ``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import TextIO

from glimmer.contract.artifacts import BEGIN, END, opens_fence
from glimmer.contract.kinds import kind_spec
from glimmer.contract.vocab import RunnerVerdict
from glimmer.runners.outcome import Outcome

Value = str | int | float | bool | None

# Anything that could be read as a marker line (§3.1's skip regex, and its siblings).
_MARKER_LIKE = re.compile(r"^[A-Z][A-Z0-9_]*_(?:PASS|FAIL|SKIP|ERROR|OK|FAULT)\b", re.ASCII)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class MarkerWords:
    """The words after ``<PREFIX>_`` for each verdict; host-health says OK and FAULT."""

    passed: str = "PASS"
    failed: str = "FAIL"
    skipped: str = "SKIP"
    errored: str = "ERROR"

    def word(self, verdict: RunnerVerdict) -> str:
        return {
            RunnerVerdict.PASS: self.passed,
            RunnerVerdict.FAIL: self.failed,
            RunnerVerdict.SKIP: self.skipped,
            RunnerVerdict.ERROR: self.errored,
        }[verdict]


def prefix_of(kind: str) -> str:
    """The marker prefix of a kind, from the contract's skip marker (``STRESSAPPTEST`` for
    memory-stress); a kind without one (host-health) uses its name in upper snake case."""
    spec = kind_spec(kind)
    if spec is not None and spec.skip_marker:
        return spec.skip_marker.removesuffix("_SKIP")
    return kind.upper().replace("-", "_")


def format_value(value: str | int | float | bool, decimals: int = 2) -> str:
    """One value on one line: booleans as true/false, floats fixed-point (no exponent)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    return _SPACE.sub(" ", str(value)).strip()


def _one_line(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


class Report:
    """One execution's stdout, written as it goes."""

    def __init__(
        self, prefix: str, out: TextIO | None = None, words: MarkerWords | None = None
    ) -> None:
        self.prefix = prefix
        self.words = words or MarkerWords()
        self._out = out or sys.stdout
        self.finished = False

    def _write(self, line: str) -> None:
        self._out.write(line + "\n")
        self._out.flush()

    def metric(self, key: str, value: Value, decimals: int = 2) -> None:
        """Print ``key=value``; ``None`` (could not be read) prints nothing."""
        if value is None:
            return
        text = format_value(value, decimals)
        if text.lower() == "n/a":
            text = "n/a (as read)"  # only unmeasurable() may declare n/a
        self._write(f"{key}={text}")

    def unmeasurable(self, key: str) -> None:
        """Declare that the hardware positively cannot produce ``key``."""
        self._write(f"{key}=n/a")

    def note(self, text: str) -> None:
        """Free text (evidence for a human; the last such line before the marker would be the
        message, but the marker always comes last)."""
        for raw in text.splitlines() or [""]:
            line = raw.rstrip()
            if not line.strip():
                continue
            head = line.split("=", 1)[0] if "=" in line else None
            if (head is not None and not re.search(r"\s", head.strip())) or _MARKER_LIKE.match(
                line.lstrip()
            ):
                line = f"note: {line}"
            self._write(line)

    def artifact(self, name: str, media_type: str, payload: str) -> None:
        """Fence ``payload`` as the artifact ``name`` (§3.6), line by line and unguarded: note()
        would prefix the fence lines into text. A name or media type that is not one word, or
        a payload line that would open or close a fence, is a runner bug (ValueError): the
        parser would drop the artifact or read the rest of the output as its payload."""
        if len(name.split()) != 1 or len(media_type.split()) != 1:
            raise ValueError(f"artifact name and media type must be one word each: {name!r}")
        lines = payload.splitlines()
        for line in lines:
            raw = line.rstrip("\r").encode()
            if raw == END or opens_fence(raw):
                raise ValueError(f"artifact {name} payload holds a fence line: {line!r}")
        self._write(f"{BEGIN.decode()} {name} {media_type}-----")
        for line in lines:
            self._write(line)
        self._write(END.decode())

    def marker(self, outcome: Outcome) -> str:
        word = self.words.word(outcome.verdict)
        reason = _one_line(outcome.reason)
        return f"{self.prefix}_{word}: {reason}" if reason else f"{self.prefix}_{word}"

    def finish(self, outcome: Outcome) -> int:
        """Print the final marker line and return the exit code; only the first call counts."""
        if not self.finished:
            self.finished = True
            self._write(self.marker(outcome))
        return outcome.exit_code
