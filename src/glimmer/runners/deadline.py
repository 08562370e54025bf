"""A runner's own deadline, on the monotonic clock: the dispatcher kills the execution at
duration + 120 s, so a runner that stops itself first still prints its evidence and a marker."""

from __future__ import annotations

import time


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._start = time.monotonic()
        self._end = self._start + seconds

    def elapsed(self) -> float:
        return time.monotonic() - self._start

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self._end

    def clamp(self, timeout: float) -> float:
        """``timeout``, shortened so that it ends no later than the deadline."""
        return max(0.0, min(timeout, self.remaining()))
