"""What every sink is: a named destination that takes one envelope per call.

A sink raises :class:`~glimmer.sinks.errors.DeliveryError` when the envelope did not arrive
(``permanent`` when sending it again cannot help) and returns when it did. It never retries by
itself: the :class:`~glimmer.sinks.sender.Sender` does, under one policy for every sink.
"""

from __future__ import annotations

import json
from typing import Protocol

from glimmer.sinks.envelope import Envelope


class Sink(Protocol):
    """A delivery destination."""

    @property
    def ident(self) -> str:
        """A stable name of the destination (the outbox keys pending envelopes on it)."""
        ...

    def send(self, envelope: Envelope, body: bytes, timeout: float) -> None:
        """Deliver ``envelope`` (``body`` is its JSON) within ``timeout`` seconds."""
        ...


def encode(envelope: Envelope) -> bytes:
    """The wire form: compact JSON, field order as built, UTF-8."""
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()
