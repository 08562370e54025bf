"""Flushing the outbox: re-send what the sinks of this process are owed, and say how it went.

``glimmer run`` leaves an envelope no sink took in the outbox; nothing else re-sends it until a
later process delivers to the same sink. A flush is that later process on its own: each sink
it was given gets its backlog, oldest first, one attempt per envelope, stopping at the first
one not taken (so order holds and a dead receiver costs one attempt). Envelopes owed to sinks
it was not given stay owed, and are named so the user can flush them too.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.sinks.sinkset import SinkSet


@dataclass(frozen=True)
class SinkFlush:
    """One sink after a flush: envelopes it took, refused for good (dropped), still owes."""

    sink: str
    delivered: int
    dropped: int
    owed: int
    error: str = ""  # why the first envelope still owed was not taken


@dataclass(frozen=True)
class FlushReport:
    sinks: tuple[SinkFlush, ...]
    elsewhere: tuple[tuple[str, int], ...]  # (sink, envelopes owed) for sinks not given

    @property
    def owed(self) -> int:
        """Envelopes the given sinks still owe."""
        return sum(s.owed for s in self.sinks)


def flush(sinks: SinkSet) -> FlushReport:
    """Re-send everything the outbox owes to ``sinks``' own sinks."""
    sinks.resend_pending()
    box = sinks.outbox
    mine = sinks.idents()
    report = []
    for ident in mine:
        owed = box.count(ident)
        state = sinks.states.get(ident)
        error = state.last_error if owed and state is not None else ""
        report.append(SinkFlush(ident, sinks.taken[ident], sinks.dropped[ident], owed, error))
    elsewhere = tuple((s, box.count(s)) for s in box.sinks() if s not in mine)
    return FlushReport(tuple(report), elsewhere)
