"""From a runner's exit code (and, for exit 2, its stdout) to what the runner declared.

Exit 2 is ambiguous on its own: a Go panic or runtime fatal error also exits 2, with a stack
trace and no metrics. So a skip counts only when the runner said so on a marker line; otherwise
the attempt is an Error, flagged as an undeclared skip so the message can explain why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from glimmer.contract.vocab import RunnerVerdict

# At the very start of a line: an upper-case word ending in _SKIP, then a word boundary
# (NCCL_SKIP: yes, NCCL_SKIPPED no, bare SKIP no). ASCII so that \b agrees with Go's RE2.
SKIP_MARKER = re.compile(r"^[A-Z][A-Z0-9_]*_SKIP\b", re.MULTILINE | re.ASCII)


@dataclass(frozen=True)
class ExitOutcome:
    verdict: RunnerVerdict
    undeclared_skip: bool = False


def has_skip_marker(stdout: str) -> bool:
    """True when some line of ``stdout`` starts with a skip marker such as ``NCCL_SKIP``."""
    return SKIP_MARKER.search(stdout) is not None


def classify_exit(exit_code: int, stdout: str) -> ExitOutcome:
    """The runner's verdict from its exit code: 0 Pass, 1 Fail, 2 Skip only with a marker,
    anything else (3, signals, negative "never ran" codes) Error."""
    if exit_code == 0:
        return ExitOutcome(RunnerVerdict.PASS)
    if exit_code == 1:
        return ExitOutcome(RunnerVerdict.FAIL)
    if exit_code == 2:
        if has_skip_marker(stdout):
            return ExitOutcome(RunnerVerdict.SKIP)
        return ExitOutcome(RunnerVerdict.ERROR, undeclared_skip=True)
    return ExitOutcome(RunnerVerdict.ERROR)
