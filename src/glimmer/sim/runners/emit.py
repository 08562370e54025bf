"""Building a runner's stdout: ``key=value`` lines, free text, then exactly one marker line.

Every first-party runner prints its evidence before the final
``<PREFIX>_PASS|_FAIL: reason|_SKIP: reason|_ERROR: reason`` line and exits 0/1/2/3 (§9). A
value the hardware positively cannot produce is ``n/a``; a value that could not be read is
simply not printed.
"""

from __future__ import annotations

from glimmer.sim.runners.call import RunnerOutput

PASS, FAIL, SKIP, ERROR = 0, 1, 2, 3


def fmt(value: float, decimals: int = 2) -> str:
    """A fixed-point number as the runners print them (no exponent, no trailing noise)."""
    return f"{value:.{decimals}f}"


def _spelled(value: str | int | float, decimals: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    return str(value)


class Stdout:
    """One execution's stdout under construction."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.lines: list[str] = []

    def kv(self, key: str, value: str | int | float, decimals: int = 2) -> None:
        # A runner prints ~30 a call, nearly all plain floats, ints and strings: those are told
        # by their exact type and printed in one step (fmt's spelling, inline); a bool or a
        # subclass of a number takes the general spelling.
        kind = type(value)
        if kind is float:
            self.lines.append(f"{key}={value:.{decimals}f}")
        elif kind is int or kind is str:
            self.lines.append(f"{key}={value}")
        else:
            self.lines.append(f"{key}={_spelled(value, decimals)}")

    def na(self, key: str) -> None:
        self.lines.append(f"{key}=n/a")

    def text(self, line: str) -> None:
        self.lines.append(line)

    def end(self, marker: str, code: int, elapsed: float) -> RunnerOutput:
        """Finish with a marker line of the runner's own shape (host-health's OK/FAULT)."""
        return self._end(marker, code, elapsed)

    def _end(self, marker: str, code: int, elapsed: float) -> RunnerOutput:
        return RunnerOutput("\n".join([*self.lines, marker]) + "\n", code, round(elapsed, 3))

    def passed(self, elapsed: float, note: str = "") -> RunnerOutput:
        return self._end(f"{self.prefix}_PASS" + (f": {note}" if note else ""), PASS, elapsed)

    def failed(self, reason: str, elapsed: float) -> RunnerOutput:
        return self._end(f"{self.prefix}_FAIL: {reason}", FAIL, elapsed)

    def skipped(self, reason: str, elapsed: float) -> RunnerOutput:
        return self._end(f"{self.prefix}_SKIP: {reason}", SKIP, elapsed)

    def errored(self, reason: str, elapsed: float) -> RunnerOutput:
        return self._end(f"{self.prefix}_ERROR: {reason}", ERROR, elapsed)
