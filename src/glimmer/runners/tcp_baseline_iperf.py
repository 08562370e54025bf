"""What ``iperf3 -J`` printed, read into tcp-baseline's figures (§9.13).

Every figure comes from the **sender** summary (``end.sum_sent``, and the per-stream sender
blocks for the RTT): retransmits and RTT are what the sending stack observes, and taking the
throughput from the other end would mix two places in one result. ``retransmits`` and
``mean_rtt`` exist only where the platform supplies ``TCP_INFO``; without them the figures are
left out, never zeroed (a zero would pass an ``Equal 0`` gate on a count nobody took).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# iperf3's connection errors worth another try while the peer's listener comes up (or is being
# restarted after a readiness probe consumed a one-off server).
_RETRYABLE = (
    "connection refused",
    "unable to connect",
    "no route to host",
    "server is busy",
    "connection reset",
    "unable to send control message",
    "unable to receive control message",
)


@dataclass(frozen=True)
class IperfRun:
    """One iperf3 invocation's JSON, read; None where it did not say."""

    error: str | None
    version: str | None
    seconds: float | None
    bytes: int | None
    bits_per_second: float | None
    retransmits: int | None
    mean_rtt_us: float | None
    received_bytes: int | None  # the server's view: what reached it

    @property
    def retryable(self) -> bool:
        text = (self.error or "").lower()
        return any(word in text for word in _RETRYABLE)

    @property
    def throughput_gbps(self) -> float | None:
        if self.bits_per_second is None:
            return None
        return self.bits_per_second / 1e9


def _document(text: str) -> dict[str, Any] | None:
    """The JSON object in iperf3's output; warnings may precede it on their own lines."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        value = json.loads(text[start:])
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _number(block: object, key: str) -> float | None:
    if not isinstance(block, dict):
        return None
    value = block.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def read_run(text: str) -> IperfRun:
    """Read one iperf3 ``-J`` output (client or server); never raises. Output that is not
    iperf3 JSON reads as an error carrying its first line."""
    doc = _document(text)
    if doc is None:
        first = text.strip().splitlines()[0] if text.strip() else "no output"
        return IperfRun(f"iperf3 printed no JSON: {first[:200]}", None, *([None] * 6))
    start = doc.get("start")
    version = start.get("version") if isinstance(start, dict) else None
    end = doc.get("end")
    end = end if isinstance(end, dict) else {}
    sent = end.get("sum_sent")
    received = end.get("sum_received")
    rtts = [
        rtt
        for stream in end.get("streams") or []
        if isinstance(stream, dict)
        for rtt in [_number(stream.get("sender"), "mean_rtt")]
        if rtt is not None
    ]
    error = doc.get("error")
    sent_bytes = _number(sent, "bytes")
    received_bytes = _number(received, "bytes")
    retransmits = _number(sent, "retransmits")
    return IperfRun(
        error=str(error) if error else None,
        version=str(version) if version else None,
        seconds=_number(sent, "seconds"),
        bytes=None if sent_bytes is None else int(sent_bytes),
        bits_per_second=_number(sent, "bits_per_second"),
        retransmits=None if retransmits is None else int(retransmits),
        mean_rtt_us=sum(rtts) / len(rtts) if rtts else None,
        received_bytes=None if received_bytes is None else int(received_bytes),
    )
