"""Test doubles for sink tests: a clock that never sleeps, a sink that is down until told
otherwise, and a ready-made envelope."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from glimmer.api.run import BurnInRun
from glimmer.sinks.envelope import TEST_COMPLETED, Envelope, Transition, build_envelope
from glimmer.sinks.errors import DeliveryError


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


class Gate:
    """A sink that refuses (retryably, or as a bug would: any exception) while ``down``."""

    def __init__(self, ident: str = "gate", bug: bool = False) -> None:
        self.ident = ident
        self.down = True
        self.bug = bug
        self.got: list[Envelope] = []
        self.tries = 0

    def send(self, envelope: Envelope, body: bytes, timeout: float) -> None:
        self.tries += 1
        if self.down:
            if self.bug:
                raise RuntimeError("sink bug")
            raise DeliveryError("receiver down")
        self.got.append(envelope)


def an_envelope(key: str = "burn/gpu-01") -> Envelope:
    run = BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "accept-1", "namespace": "lab", "uid": "u-1"},
            "spec": {"profileRef": "p", "target": {"nodeNames": ["gpu-01"]}},
            "status": {"phase": "Running"},
        }
    )
    at = datetime(2026, 9, 1, tzinfo=UTC)
    return build_envelope(Transition(TEST_COMPLETED, key, run), sent_at=at)
