"""How much of a runner's output glimmer keeps, and how it says so when it keeps less.

A runner is any container image, so its log can be any size: 100 MB of blank lines once took
2.5 GB and 27 s to parse, and a 20 MB line was stored whole as the result's message, again as
the attempt's, and again in every sink envelope. The contract therefore bounds what it reads
and what it keeps, and a result that was bounded says so in its message.

The bounds keep verdicts fail-closed:

* Only the **tail** of a long log is read. "The last occurrence wins", so every name the tail
  holds has exactly the value it would have had from the whole log; a name only the cut head
  held is absent, and a gate on it fails as not reported. (Keeping the head as well could pair
  an early reading with a later silence and pass a gate the middle would have failed.)
* A value longer than its bound is kept cut and marked, and the mark makes it non-numeric, so a
  gate on it fails instead of reading a shorter, different number.
* Names past the bound on distinct names are dropped, never guessed at, for the same reason.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from glimmer.contract.text import clamp_utf8

# The last 4 MiB of a log. A first-party soak reprints its whole reading set every 15 s
# (~1.5 KB), so this holds hours of reprints, and a multi-day soak is segmented into pods far
# shorter than that; the bound is about hostile or broken output, not real evidence.
LOG_TAIL_BYTES = 4 * 1024 * 1024
# One metric value. Real values are numbers or short labels (a PCI address list for 8 GPUs is
# ~110 bytes); the bound keeps a status of ~150 metrics per result small.
VALUE_BYTES = 1024
# A key longer than this is a rejected name (registered names are under 40 characters).
KEY_BYTES = 128
# The runner's last words, as the result's message (the kubelet's detail is held to 512).
MESSAGE_BYTES = 2048
# Distinct metric names (measured and n/a together) one execution may declare; the registry
# has under 200, first-party runners print under 100.
MAX_NAMES = 1024
# Rejected keys listed per execution (the message names only the first few anyway).
MAX_REJECTED = 64

CUT_MARK = "…"  # not ASCII, so a cut value can never read as a number


@dataclass(frozen=True)
class Tail:
    """The part of a log that is parsed, and how big the whole log was."""

    data: bytes
    total_bytes: int

    @property
    def cut(self) -> bool:
        return len(self.data) < self.total_bytes


def _utf8_size(text: str) -> int:
    if text.isascii():  # O(1) in CPython: no copy for the common case
        return len(text)
    step = 1 << 20  # measured in pieces so that a 100 MB log is never encoded whole
    return sum(
        len(text[i : i + step].encode("utf-8", "surrogatepass")) for i in range(0, len(text), step)
    )


def log_tail(stdout: str | bytes, limit: int = LOG_TAIL_BYTES) -> Tail:
    """At most ``limit`` bytes from the end of ``stdout``, starting at a line boundary.

    The line the cut falls in is dropped whole: half a ``key=value`` line could read as a
    different key or a shorter number. Memory is bounded by ``limit``, not by the log.
    """
    if isinstance(stdout, bytes):
        total = len(stdout)
        if total <= limit:
            return Tail(stdout, total)
        window = stdout[-(limit + 1) :]
    else:
        total = _utf8_size(stdout)
        if total <= limit:
            return Tail(stdout.encode("utf-8", "surrogatepass"), total)
        # limit + 1 characters hold at least limit + 1 bytes; the bytes are cut below.
        window = stdout[-(limit + 1) :].encode("utf-8", "surrogatepass")[-(limit + 1) :]
    # window[0] is the byte before the kept part: a newline there means no line is cut.
    start = window.find(b"\n")
    return Tail(window[start + 1 :] if start >= 0 else b"", total)


def stream_tail(chunks: Iterable[bytes], limit: int = LOG_TAIL_BYTES) -> Tail:
    """:func:`log_tail` of a log read in pieces (a backend streaming a pod log), holding no more
    than ``limit`` plus one piece at any time, however long the log is."""
    kept: deque[bytes] = deque()
    held = total = 0
    for chunk in chunks:
        kept.append(chunk)
        held += len(chunk)
        total += len(chunk)
        while kept and held - len(kept[0]) > limit:
            held -= len(kept.popleft())
    window = b"".join(kept)
    if total <= limit:
        return Tail(window, total)
    cut = log_tail(window, limit)  # window holds more than limit bytes: the same cut
    return Tail(cut.data, total)


def clamp_text(text: str, limit: int) -> tuple[str, int]:
    """``text`` if it fits in ``limit`` UTF-8 bytes, else its rune-safe head plus the cut
    mark; with the text's size in bytes."""
    if len(text) <= limit and text.isascii():
        return text, len(text)
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, len(data)
    head = clamp_utf8(data, limit).decode("utf-8", "replace")
    return head + CUT_MARK, len(data)


@dataclass
class Bounding:
    """What one parse left out, phrased for the result's message."""

    tail: Tail
    values_cut: dict[str, int] = field(default_factory=dict)  # name -> bytes it held
    names_dropped: int = 0
    keys_refused: int = 0  # keys over KEY_BYTES
    rejected_unlisted: int = 0
    message_bytes: int = 0  # > MESSAGE_BYTES when the message was cut

    def note(self) -> str:
        """One bracketed sentence naming every bound that was hit, or ``""``."""
        parts: list[str] = []
        if self.tail.cut:
            parts.append(
                f"read only the last {len(self.tail.data)} of its {self.tail.total_bytes} "
                f"bytes (bound {LOG_TAIL_BYTES}); a name printed only before that is missing"
            )
        if self.values_cut:
            named = ", ".join(f"{n} ({b} bytes)" for n, b in sorted(self.values_cut.items())[:4])
            more = len(self.values_cut) - 4
            parts.append(
                f"cut {len(self.values_cut)} value(s) over {VALUE_BYTES} bytes, which no gate "
                f"reads as a number: {named}" + (f" and {more} more" if more > 0 else "")
            )
        if self.keys_refused:
            parts.append(f"refused {self.keys_refused} key(s) over {KEY_BYTES} bytes")
        if self.names_dropped:
            parts.append(
                f"dropped {self.names_dropped} name(s) past the first {MAX_NAMES} distinct ones"
            )
        if self.rejected_unlisted:
            parts.append(f"listed only the first {MAX_REJECTED} rejected names")
        if self.message_bytes > MESSAGE_BYTES:
            parts.append(f"cut its last line from {self.message_bytes} to {MESSAGE_BYTES} bytes")
        if not parts:
            return ""
        return "[runner output over the contract's bounds: " + "; ".join(parts) + "]"
