"""How a runner ends: a verdict and a reason, and the exceptions that stop a runner early.

A runner's body either returns an :class:`Outcome` or raises :class:`Stop` (or one of its
kinds) from wherever it found out; the program wrapper turns both into the final marker line
and the exit code. Keeping the verdict in one value means the exit code can never disagree with
the marker.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.contract.vocab import RunnerVerdict

# §3.1: 0 Pass, 1 Fail (the hardware was measured and fell short), 2 Skip (with a marker),
# 3 Error (could not measure; retryable).
EXIT_CODE: dict[RunnerVerdict, int] = {
    RunnerVerdict.PASS: 0,
    RunnerVerdict.FAIL: 1,
    RunnerVerdict.SKIP: 2,
    RunnerVerdict.ERROR: 3,
}


@dataclass(frozen=True)
class Outcome:
    verdict: RunnerVerdict
    reason: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT_CODE[self.verdict]


def passed(reason: str = "") -> Outcome:
    return Outcome(RunnerVerdict.PASS, reason)


def failed(reason: str) -> Outcome:
    return Outcome(RunnerVerdict.FAIL, reason)


def skipped(reason: str) -> Outcome:
    return Outcome(RunnerVerdict.SKIP, reason)


def errored(reason: str) -> Outcome:
    return Outcome(RunnerVerdict.ERROR, reason)


class Stop(Exception):
    """Ends the runner with ``outcome``; raised where the reason is found."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.reason)
        self.outcome = outcome


class ConfigError(Stop):
    """A malformed or contradictory configuration variable: Error (exit 3), naming it."""

    def __init__(self, variable: str, why: str) -> None:
        super().__init__(errored(f"{variable}: {why}"))
        self.variable = variable


class MissingTool(Stop):
    """A tool the runner wraps is not installed: Error, never Fail (the part was not judged).
    The reason names the tool, where it was looked for, and the package that provides it."""

    def __init__(
        self, tool: str, package: str, source: str = "Debian", where: str = "PATH", hint: str = ""
    ) -> None:
        reason = f"{tool} not found on {where}: install the {source} package {package}"
        super().__init__(errored(f"{reason}; {hint}" if hint else reason))
        self.tool = tool
        self.package = package
