"""Envelopes a sink has not accepted yet, kept on disk so a restarted process re-sends them.

The outbox is a JSONL log in a state folder: ``put`` records an envelope owed to a sink,
``done`` that the sink took it (or refused it for good). Replaying the log gives what is still
owed, in the order it was first owed, each with its newest body (a re-sent terminal envelope
may carry more results than the first). Every record is ``fsync``'d before the call returns, and
the log is rewritten compactly (temporary file, rename) once most of it is history. Without a
folder the outbox lives in memory only (tests, one-shot use).

Several processes may share one state folder (a run and a ``glimmer sink flush``, two runs).
Each keeps only its own view in memory, so a compaction written from that view alone would
erase what the others appended meanwhile. Every append and every compaction therefore holds an
exclusive ``flock`` on ``outbox.lock`` (a file of its own: the log itself is replaced by a
rename), and a process that finds the log grown by someone else since its last write compacts
from a fresh replay of the log rather than from its memory.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from glimmer.api.budget import check_size
from glimmer.sinks.envelope import Envelope

FILENAME = "outbox.jsonl"
LOCKNAME = "outbox.lock"
_COMPACT_AFTER = 256  # history records tolerated before the log is rewritten


def _same_but_sent_at(a: Envelope, b: Envelope) -> bool:
    """Two bodies of one delivery that differ at most in when they were built."""
    return a.keys() == b.keys() and all(a[k] == b[k] for k in a if k != "sentAt")


class Outbox:
    """Pending envelopes by sink, then by deliveryId, each sink's oldest first. Every
    operation a delivery makes (owe one, take the oldest, mark one done) costs the same however
    much is owed, so a dead sink through a long run stays linear."""

    def __init__(self, state_dir: Path | None = None) -> None:
        self.path = state_dir / FILENAME if state_dir is not None else None
        self._pending: dict[str, dict[str, Envelope]] = {}
        self._history = 0
        # (device, inode, size) of the log after this process's last write: anything else
        # found there later means another process wrote to it meanwhile.
        self._mark: tuple[int, int, int] | None = None
        if self.path is not None and self.path.exists():
            with self._locked():
                self._pending = _replay(self.path)
                self._compact_locked(trust_memory=True)

    def __len__(self) -> int:
        return sum(len(owed) for owed in self._pending.values())

    def owed(self, sink: str) -> list[Envelope]:
        """What ``sink`` is still owed, oldest first."""
        return list(self._pending.get(sink, {}).values())

    def count(self, sink: str) -> int:
        """How many envelopes ``sink`` is still owed."""
        return len(self._pending.get(sink, {}))

    def oldest(self, sink: str) -> tuple[str, Envelope] | None:
        """The deliveryId and body of what ``sink`` has been owed longest; None when nothing."""
        owed = self._pending.get(sink)
        if not owed:
            return None
        return next(iter(owed.items()))

    def sinks(self) -> list[str]:
        """Every sink that is owed something."""
        return [sink for sink, owed in self._pending.items() if owed]

    def has(self, sink: str) -> bool:
        return bool(self._pending.get(sink))

    def put(self, sink: str, envelope: Envelope) -> None:
        """Owe ``envelope`` to ``sink`` (replacing an older body of the same delivery)."""
        delivery_id = str(envelope["deliveryId"])
        before = self._pending.get(sink, {}).get(delivery_id)
        self._owe(sink, delivery_id, envelope)
        if before is not None and _same_but_sent_at(before, envelope):
            # A terminal envelope announced again says what the log already holds: keep the log
            # from growing by a whole run at every announcement.
            return
        self._append({"op": "put", "sink": sink, "envelope": envelope})

    def _owe(self, sink: str, delivery_id: str, envelope: Envelope) -> None:
        owed = self._pending.setdefault(sink, {})
        if delivery_id in owed:
            self._history += 1
        owed[delivery_id] = envelope  # a newer body keeps its place in the order

    def done(self, sink: str, delivery_id: str) -> None:
        """``sink`` took (or for good refused) this delivery."""
        if not self._forget(sink, delivery_id):
            return
        self._history += 2
        self._append({"op": "done", "sink": sink, "deliveryId": delivery_id})
        if self._history > _COMPACT_AFTER:
            self._compact()

    def _forget(self, sink: str, delivery_id: str) -> bool:
        owed = self._pending.get(sink)
        if owed is None or owed.pop(delivery_id, None) is None:
            return False
        if not owed:
            del self._pending[sink]
        return True

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the outbox's lock: no other process appends or compacts meanwhile."""
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.parent / LOCKNAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _append(self, record: dict[str, Any]) -> None:
        if self.path is None:
            return
        line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        with self._locked():
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                in_step = self._mark is not None and _identity(fd) == self._mark
                os.write(fd, line)
                os.fsync(fd)
                # Still in step only if nobody else wrote since this process last did.
                self._mark = _identity(fd) if in_step else None
            finally:
                os.close(fd)

    def _compact(self) -> None:
        self._history = 0
        if self.path is None:
            return
        with self._locked():
            self._compact_locked(trust_memory=False)

    def _compact_locked(self, *, trust_memory: bool) -> None:
        """Rewrite the log as what it still owes. From memory when only this process wrote to
        it since we last looked; from a replay of the log itself otherwise."""
        assert self.path is not None
        self._history = 0
        if not trust_memory and not self._in_step():
            # Someone else wrote meanwhile: the log, not this memory, is what is owed. Taking
            # it in keeps the two alike, so the next compaction may trust memory again.
            self._pending = _replay(self.path)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for sink, owed in self._pending.items():
                for envelope in owed.values():
                    record = {"op": "put", "sink": sink, "envelope": envelope}
                    os.write(fd, json.dumps(record, separators=(",", ":")).encode() + b"\n")
            os.fsync(fd)
            self._mark = _identity(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)

    def _in_step(self) -> bool:
        """Whether the log is as this process last left it."""
        try:
            fd = os.open(self.path or "", os.O_RDONLY)
        except FileNotFoundError:
            return False
        try:
            return self._mark is not None and _identity(fd) == self._mark
        finally:
            os.close(fd)


def _identity(fd: int) -> tuple[int, int, int]:
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino, st.st_size)


def _replay(path: Path) -> dict[str, dict[str, Envelope]]:
    """What the log at ``path`` still owes, by sink then deliveryId."""
    # Refused at start, naming the budget, rather than read into memory whole: past it,
    # ``glimmer sink flush`` the outbox (or remove it) before the next run.
    check_size(path, "sink-log")
    view = Outbox()
    with path.open("rb") as f:
        for line in f:
            try:
                record: Any = json.loads(line)
            except ValueError:
                continue  # a torn last line from a crash mid-write
            if not isinstance(record, dict):
                continue
            sink = str(record.get("sink", ""))
            if record.get("op") == "put" and isinstance(record.get("envelope"), dict):
                envelope = record["envelope"]
                view._owe(sink, str(envelope.get("deliveryId", "")), envelope)
            elif record.get("op") == "done":
                view._forget(sink, str(record.get("deliveryId", "")))
    return view._pending
