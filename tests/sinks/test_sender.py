"""The retry engine (specs/burnin.md §5.4, Appendix A) on a fake clock: nothing sleeps."""

from __future__ import annotations

import pytest
from sink_doubles import FakeClock

from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.sender import CLI_POLICY, OPERATOR_POLICY, RetryPolicy, Sender, VirtualWaits


class Flaky:
    """Fails ``failures`` times (retryably, or permanently), then accepts."""

    def __init__(self, failures: int, permanent: bool = False) -> None:
        self.failures = failures
        self.permanent = permanent
        self.timeouts: list[float] = []

    def __call__(self, timeout: float) -> None:
        self.timeouts.append(timeout)
        if len(self.timeouts) <= self.failures:
            raise DeliveryError(f"try {len(self.timeouts)} failed", permanent=self.permanent)


def test_the_policies_are_the_specs_constants() -> None:
    assert (OPERATOR_POLICY.attempts, OPERATOR_POLICY.base, OPERATOR_POLICY.cap) == (2, 1.0, 2.0)
    assert (OPERATOR_POLICY.jitter, OPERATOR_POLICY.budget) == (0.0, 15.0)
    assert (CLI_POLICY.attempts, CLI_POLICY.base, CLI_POLICY.cap) == (6, 2.0, 120.0)
    assert (CLI_POLICY.jitter, CLI_POLICY.timeout, CLI_POLICY.budget) == (0.25, 30.0, None)


def test_cli_policy_waits_double_from_two_seconds_capped() -> None:
    waits = [CLI_POLICY.wait_before(n, rng=lambda: 0.5) for n in range(1, 7)]
    assert waits == [0.0, 2.0, 4.0, 8.0, 16.0, 32.0]
    far = RetryPolicy(attempts=12, base=2.0, cap=120.0)
    assert far.wait_before(10) == 120.0


@pytest.mark.parametrize("rng", [0.0, 0.999999])
def test_jitter_stays_within_a_quarter(rng: float) -> None:
    wait = CLI_POLICY.wait_before(3, rng=lambda: rng)
    assert 3.0 <= wait <= 5.0 and wait != 4.0


def test_retryable_failures_are_retried_until_accepted(clock: FakeClock) -> None:
    attempt = Flaky(failures=3)
    made = Sender(CLI_POLICY, clock, rng=lambda: 0.5).send("hook", attempt)
    assert made == 4 and clock.sleeps == [2.0, 4.0, 8.0]
    assert attempt.timeouts == [30.0] * 4


def test_a_permanent_failure_is_not_retried(clock: FakeClock) -> None:
    attempt = Flaky(failures=5, permanent=True)
    with pytest.raises(DeliveryError) as err:
        Sender(CLI_POLICY, clock).send("hook", attempt)
    assert err.value.permanent and len(attempt.timeouts) == 1 and not clock.sleeps
    assert str(err.value) == "delivery to hook failed after 1 attempt: try 1 failed"


def test_the_attempts_run_out_with_the_last_error_named(clock: FakeClock) -> None:
    with pytest.raises(DeliveryError) as err:
        Sender(CLI_POLICY, clock, rng=lambda: 0.5).send("hook", Flaky(failures=99))
    assert str(err.value) == "delivery to hook failed after 6 attempts: try 6 failed"
    assert not err.value.permanent and sum(clock.sleeps) == 2 + 4 + 8 + 16 + 32


def test_operator_policy_makes_two_attempts_one_second_apart(clock: FakeClock) -> None:
    with pytest.raises(DeliveryError):
        Sender(OPERATOR_POLICY, clock).send("hook", Flaky(failures=99))
    assert clock.sleeps == [1.0]


def test_the_budget_bounds_waits_and_attempt_timeouts(clock: FakeClock) -> None:
    sender = Sender(OPERATOR_POLICY, clock)
    deadline = sender.deadline()
    assert deadline == 15.0
    clock.t = 14.5  # earlier sinks of the transition spent most of the budget
    attempt = Flaky(failures=99)
    with pytest.raises(DeliveryError) as err:
        sender.send("hook", attempt, deadline)
    assert attempt.timeouts == [0.5] and not clock.sleeps  # the 1 s wait would pass the budget
    assert "after 1 attempt" in str(err.value)
    clock.t = 15.0
    with pytest.raises(DeliveryError) as spent:
        sender.send("hook", Flaky(failures=0), deadline)
    assert "after 0 attempts: the delivery budget ran out" in str(spent.value)


def test_virtual_waits_spend_the_cli_policy_without_sleeping() -> None:
    real = FakeClock()
    virtual = VirtualWaits(real)
    dead = Flaky(failures=99)
    sender = Sender(CLI_POLICY, virtual, rng=lambda: 0.5)
    with pytest.raises(DeliveryError, match="failed after 6 attempts"):
        sender.send("webhook=http://x", dead)
    assert real.sleeps == []  # not a second of the real clock
    assert virtual.waited == 2 + 4 + 8 + 16 + 32
    assert virtual.monotonic() == real.monotonic() + virtual.waited


class Wall:
    """A wall clock that only moves when an attempt says it took time."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_sinks_failed_attempts_get_a_wall_allowance_then_no_more_tries() -> None:
    wall = Wall()
    timeouts: list[float] = []

    def hangs(timeout: float) -> None:
        timeouts.append(timeout)
        wall.t += 2.0  # a receiver that never answers: the attempt takes its time, then fails
        raise DeliveryError("ReadTimeout")

    sender = Sender(CLI_POLICY, VirtualWaits(FakeClock()), wall_allowance=5.0, wall=wall)
    with pytest.raises(DeliveryError, match="tries it no more") as e:
        sender.send("hook", hangs)
    assert timeouts == [5.0, 3.0, 1.0] and not e.value.permanent
    assert sender.spent("hook")
    with pytest.raises(DeliveryError, match="after 0 attempts: not tried"):
        sender.send("hook", hangs)
    assert len(timeouts) == 3
    # Another sink has its own allowance, and a slow success never spends one.
    slow = Flaky(failures=0)
    assert sender.send("other", lambda timeout: (slow(timeout), setattr(wall, "t", wall.t + 60)))
    assert slow.timeouts == [5.0] and not sender.spent("other")
