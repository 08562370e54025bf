"""The sinks of a process: which sink a transition goes to, the outbox behind them, and the
rule that a sink failure never reaches the run.

A transition goes to the sinks its pinned plan names (looked up in the run's namespace; a name
with no sink counts as a failed delivery) and to every sink the process was given by flag. The
envelope is built once per transition (:mod:`.envelope`) and validated; each sink then gets it
under the retry policy, all of them within one budget.

Ordering and the outbox: a sink that has envelopes owed (the outbox) gets nothing new ahead of
them. A new RunPhaseChanged or TestCompleted joins the backlog (or refreshes its entry there),
and the backlog is re-sent in order, one attempt per envelope, stopping at the first that is
not taken; so a dead receiver costs one attempt per transition rather than a full policy each.
A Checkpoint is never queued — the next one supersedes it (specs/burnin.md §5.1) — and is sent
only once its sink's backlog is clear.

One sink's failure never multiplies another's envelopes: a terminal envelope is announced again
until *every* sink took it, and a sink that already took that very envelope (same deliveryId,
same content but ``sentAt``) in this process is skipped rather than sent a duplicate. A body
that changed (more results) is sent again, as receivers keep the latest copy of an id.

:meth:`SinkSet.deliver` returns False when some sink did not take the envelope (the engine then
marks the terminal delivery pending and calls again later) and never raises: whatever a sink
does, the verdict is already written and stays as it is.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial

from glimmer.api.sink import BurnInSinkStatus
from glimmer.sinks.base import Sink, encode
from glimmer.sinks.envelope import (
    CHECKPOINT,
    Cluster,
    Envelope,
    Transition,
    build_envelope,
    rfc3339,
    validate_envelope,
)
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.outbox import Outbox
from glimmer.sinks.prometheus import Exporter
from glimmer.sinks.sender import Sender

log = logging.getLogger(__name__)


def _wall_clock() -> datetime:
    return datetime.now(UTC)


@dataclass
class SinkState:
    """What a BurnInSink's status would say: the last success and the last error (cleared by a
    success)."""

    last_delivery: datetime | None = None
    last_error: str = ""


def _content(envelope: Envelope) -> str:
    """A digest of what an envelope says: everything but ``sentAt``, which each copy moves."""
    rest = {k: v for k, v in envelope.items() if k != "sentAt"}
    return hashlib.sha256(encode(rest)).hexdigest()


class SinkSet:
    """Named sinks (by namespace and name, as BurnInSink objects), sinks every transition goes
    to, the outbox, the sender and its policy."""

    def __init__(
        self,
        *,
        named: Mapping[tuple[str, str], Sink] | None = None,
        always: Sequence[Sink] = (),
        outbox: Outbox | None = None,
        sender: Sender | None = None,
        cluster: Cluster | None = None,
        exporter: Exporter | None = None,
        now: Callable[[], datetime] = _wall_clock,
    ) -> None:
        self.named = dict(named or {})
        self.always = list(always)
        self.outbox = outbox if outbox is not None else Outbox()
        self.sender = sender if sender is not None else Sender()
        self.cluster = cluster
        self.exporter = exporter
        self.now = now
        self.states: dict[str, SinkState] = {}
        # What this process delivered and dropped per sink (``glimmer sink flush`` reports it).
        self.taken: Counter[str] = Counter()
        self.dropped: Counter[str] = Counter()
        # (sink, deliveryId) -> digest of the content a sink took: a re-announcement of the
        # same content is not sent to it again.
        self._took: dict[tuple[str, str], str] = {}
        self._by_ident: dict[str, Sink] = {s.ident: s for s in [*self.named.values(), *always]}

    # -- delivering ------------------------------------------------------------------------------
    def deliver(self, transition: Transition) -> bool:
        """Send ``transition``'s envelope to its sinks; True when every one took it."""
        try:
            return self._deliver(transition)
        except Exception:  # a sink's bug must not become the run's: log it, report a failure
            log.exception("delivery of %s failed unexpectedly", transition.reason)
            return False

    def _targets(self, transition: Transition) -> list[tuple[str, Sink | None]]:
        namespace = transition.run.metadata.namespace or "default"
        named = [(f"{namespace}/{n}", self.named.get((namespace, n))) for n in transition.sinks]
        return [*named, *((s.ident, s) for s in self.always)]

    def _deliver(self, transition: Transition) -> bool:
        targets = self._targets(transition)
        if not targets:
            return True  # a run whose plan names no sink delivers nothing
        at = transition.at or self.now()
        envelope = build_envelope(transition, sent_at=at, cluster=self.cluster)
        try:
            validate_envelope(envelope)
        except DeliveryError as e:
            for ident, _ in targets:
                self._failed(ident, str(e))
            return False
        deadline = self.sender.deadline()
        queue = transition.reason != CHECKPOINT
        ok = True
        for ident, sink in targets:
            if sink is None:
                self._failed(ident, f"BurnInSink {ident} not found")
                ok = False
                continue
            if self._already_took(ident, envelope):
                continue
            ok = self._send_to(sink, envelope, at, deadline, queue) and ok
        return ok

    def _send_to(
        self, sink: Sink, envelope: Envelope, at: datetime, deadline: float | None, queue: bool
    ) -> bool:
        ident = sink.ident
        if self.outbox.has(ident):
            if queue:
                self.outbox.put(ident, envelope)  # behind what is owed, never ahead of it
                return self._drain(sink, at, deadline)
            if not self._drain(sink, at, deadline):
                return False  # a checkpoint never overtakes what is owed
        body = encode(envelope)
        try:
            self.sender.send(ident, lambda timeout: sink.send(envelope, body, timeout), deadline)
        except DeliveryError as e:
            self._failed(ident, str(e))
            if queue and not e.permanent:
                self.outbox.put(ident, envelope)
            return False
        self._delivered(ident, at, envelope)
        return True

    def _drain(self, sink: Sink, at: datetime, deadline: float | None) -> bool:
        """Re-send what ``sink`` is owed, oldest first, one attempt each; True when nothing is
        owed any more. A permanent refusal is dropped (it would be refused again) and logged."""
        ident = sink.ident
        clean = True
        while (oldest := self.outbox.oldest(ident)) is not None:
            key, owed = oldest
            timeout = self.sender.attempt_timeout(ident, deadline)
            if timeout <= 0:
                return False
            envelope = {**owed, "sentAt": rfc3339(at)}  # this attempt is built now
            body = encode(envelope)
            try:
                self.sender.try_once(ident, partial(sink.send, envelope, body), timeout)
            except DeliveryError as e:
                self._failed(ident, f"delivery to {ident} failed: {e}")
                if not e.permanent:
                    return False
                clean = False
                self.dropped[ident] += 1
                log.warning("dropping %s for %s: %s", key, ident, e)
            else:
                self._delivered(ident, at, envelope)
            self.outbox.done(ident, key)
        return clean

    def resend_pending(self, at: datetime | None = None) -> bool:
        """Re-send everything owed to the sinks this process has (after a restart); True when
        nothing is owed to them any more. Envelopes owed to sinks it lacks stay owed."""
        at = at or self.now()
        deadline = self.sender.deadline()
        ok = True
        for ident in self.outbox.sinks():
            sink = self._by_ident.get(ident)
            if sink is not None:
                try:
                    ok = self._drain(sink, at, deadline) and ok
                except Exception:  # as in deliver: never let a sink raise into the caller
                    log.exception("re-sending to %s failed unexpectedly", ident)
                    ok = False
        return ok

    def idents(self) -> list[str]:
        """The sinks this process has, by the name the outbox keys them on."""
        return list(self._by_ident)

    def forget_run(self, uid: str) -> None:
        """A run was deleted or collected by its TTL: its Prometheus series go."""
        if self.exporter is not None:
            self.exporter.forget(uid)

    # -- sink status -----------------------------------------------------------------------------
    def status_of(self, ident: str) -> BurnInSinkStatus:
        """A BurnInSink's status as this process saw it (``ident`` is ``<namespace>/<name>``
        for an object); writing it back is best-effort and never holds up a delivery."""
        state = self.states.get(ident, SinkState())
        return BurnInSinkStatus(
            last_delivery=state.last_delivery, last_error=state.last_error or None
        )

    def _already_took(self, ident: str, envelope: Envelope) -> bool:
        return self._took.get((ident, str(envelope["deliveryId"]))) == _content(envelope)

    def _delivered(self, ident: str, at: datetime, envelope: Envelope) -> None:
        self.states[ident] = SinkState(last_delivery=at, last_error="")
        self.taken[ident] += 1
        self._took[(ident, str(envelope["deliveryId"]))] = _content(envelope)

    def _failed(self, ident: str, error: str) -> None:
        state = self.states.setdefault(ident, SinkState())
        state.last_error = error
        log.warning("%s", error)

    def close(self) -> None:
        """Release connections held by the sinks."""
        for sink in self._by_ident.values():
            close = getattr(sink, "close", None)
            if callable(close):
                close()
