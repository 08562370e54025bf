"""A clock for the retry engine that never sleeps: waits only move its monotonic time."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FakeClock:
    """Monotonic time that only moves when something sleeps on it."""

    t: float = 0.0
    sleeps: list[float] = field(default_factory=list)

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds
