"""The retry engine (specs/burnin.md §5.4): send an envelope to one sink under a policy.

The policy is data. Two are named by the spec (Appendix A):

* :data:`OPERATOR_POLICY` — inside a reconciler the loop itself is the durable retry, so a
  transition spends at most 15 s on all its sinks: 2 attempts, 1 s then at most 2 s apart, no
  jitter;
* :data:`CLI_POLICY` — a one-shot command has nothing behind it: 6 attempts, 2 s doubling to at
  most 2 min, ±25 % jitter, 30 s per HTTP attempt.

Time comes from an injected :class:`Clock` so tests never sleep: the budget is measured on its
``monotonic`` and every wait goes through its ``sleep``. :class:`VirtualWaits` is the clock of a
simulated run: its run lives in simulated time, so the waits between attempts pass without
sleeping (a refusing receiver then costs a few connection attempts, not minutes).

A wait is not the only way a dead receiver holds a process: one that accepts connections and
never answers costs a whole attempt timeout per try. ``Sender.wall_allowance`` bounds that: the
wall-clock seconds one sink's *failed* attempts may take in this process, after which the sink
gets no more attempts here and what it is owed stays in the outbox. A healthy sink never spends
it, however slow its successful answers are.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from glimmer.sinks.errors import DeliveryError


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one sink. ``budget`` (seconds, None for none) bounds every sink of one
    transition together; ``timeout`` bounds one attempt (an HTTP request)."""

    attempts: int
    base: float
    cap: float
    jitter: float = 0.0
    timeout: float = 30.0
    budget: float | None = None

    def wait_before(self, attempt: int, rng: Callable[[], float] = random.random) -> float:
        """Seconds to wait before attempt ``attempt`` (2-based): base·2^(n−2), capped, then
        spread by ±``jitter`` (``rng`` returns a number in [0, 1))."""
        if attempt < 2:
            return 0.0
        wait = min(self.base * 2.0 ** (attempt - 2), self.cap)
        if self.jitter:
            wait *= 1.0 + self.jitter * (2.0 * rng() - 1.0)
        return max(wait, 0.0)


OPERATOR_POLICY = RetryPolicy(attempts=2, base=1.0, cap=2.0, jitter=0.0, timeout=15.0, budget=15.0)
CLI_POLICY = RetryPolicy(attempts=6, base=2.0, cap=120.0, jitter=0.25, timeout=30.0)


class Clock(Protocol):
    def monotonic(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class RealClock:
    """The process's own clock (used outside tests)."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class VirtualWaits:
    """A clock on which waits pass without sleeping; real time still passes under it.

    ``monotonic`` is the real monotonic clock plus every wait so far, so a budget measured on it
    still sees both the attempts' real duration and the waits. ``waited`` is their total.
    """

    def __init__(self, real: Clock | None = None) -> None:
        self.real = real or RealClock()
        self.waited = 0.0

    def monotonic(self) -> float:
        return self.real.monotonic() + self.waited

    def sleep(self, seconds: float) -> None:
        self.waited += max(seconds, 0.0)


class Attempt(Protocol):
    """One try at one sink: raise :class:`DeliveryError` on failure."""

    def __call__(self, timeout: float) -> None: ...


@dataclass
class Sender:
    """Runs attempts under a policy. ``deadline`` (on the clock's monotonic scale) is the end of
    the transition's budget, shared by all its sinks."""

    policy: RetryPolicy = OPERATOR_POLICY
    clock: Clock = field(default_factory=RealClock)
    rng: Callable[[], float] = random.random
    # Wall seconds one sink's failed attempts may take in this process (None: no bound); wall
    # time, not ``clock``, because it bounds how long a person waits for the command.
    wall_allowance: float | None = None
    wall: Callable[[], float] = time.monotonic
    _failed_wall: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    def deadline(self) -> float | None:
        """The end of a budget starting now (None: unbounded)."""
        if self.policy.budget is None:
            return None
        return self.clock.monotonic() + self.policy.budget

    def spent(self, describe: str) -> bool:
        """True when ``describe``'s failed attempts used up its wall allowance."""
        if self.wall_allowance is None:
            return False
        return self._failed_wall.get(describe, 0.0) >= self.wall_allowance

    def attempt_timeout(self, describe: str, deadline: float | None) -> float:
        """Seconds the next attempt at ``describe`` may take (0 or less: make none)."""
        timeout = self.policy.timeout
        if deadline is not None:
            timeout = min(timeout, deadline - self.clock.monotonic())
        if self.wall_allowance is not None:
            timeout = min(timeout, self.wall_allowance - self._failed_wall.get(describe, 0.0))
        return timeout

    def try_once(self, describe: str, attempt: Attempt, timeout: float) -> None:
        """One attempt; the wall time of a failed one is charged to ``describe``'s allowance."""
        started = self.wall()
        try:
            attempt(timeout)
        except DeliveryError:
            took = max(self.wall() - started, 0.0)
            self._failed_wall[describe] = self._failed_wall.get(describe, 0.0) + took
            raise

    def send(self, describe: str, attempt: Attempt, deadline: float | None = None) -> int:
        """Try until accepted, a permanent failure, the attempts are spent or the budget runs
        out. Returns the attempts made; raises :class:`DeliveryError` naming ``describe``."""
        made = 0
        last: DeliveryError | None = None
        for n in range(1, max(self.policy.attempts, 1) + 1):
            if self.spent(describe):
                break  # waiting first would only delay the same answer
            wait = self.policy.wait_before(n, self.rng)
            if wait:
                if deadline is not None and self.clock.monotonic() + wait >= deadline:
                    break  # the wait alone would spend the budget: stop, the caller retries
                self.clock.sleep(wait)
            timeout = self.attempt_timeout(describe, deadline)
            if timeout <= 0:
                break
            made += 1
            try:
                self.try_once(describe, attempt, timeout)
                return made
            except DeliveryError as e:
                last = e
                if e.permanent:
                    break
        reason = str(last) if last is not None else "the delivery budget ran out"
        if self.spent(describe) and (last is None or not last.permanent):
            reason = (
                f"{reason if last is not None else 'not tried'}; its failed attempts took "
                f"{self.wall_allowance:g} s of wall time, so this process tries it no more"
            )
        raise DeliveryError(
            f"delivery to {describe} failed after {made} attempt{'s' if made != 1 else ''}: "
            f"{reason}",
            permanent=last is not None and last.permanent,
        )
