"""The file sink: one envelope per line appended to a JSONL file, on disk before it returns.

Append-only, so every delivery is kept — a retried or re-sent envelope appears again under the
same ``deliveryId``; a reader that wants one record per delivery keeps the last line of each id
(:func:`latest_by_id`). Each line is written with one ``write`` and ``fsync``'d, so a crash
leaves at most a torn last line, which readers skip.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from glimmer.api.budget import check_size
from glimmer.sinks.envelope import Envelope
from glimmer.sinks.errors import DeliveryError


class JsonlSink:
    """Append envelopes to ``path`` (its folder is created when missing)."""

    def __init__(self, path: Path, *, name: str = "") -> None:
        self.path = path
        self._ident = name or f"file={path}"

    @property
    def ident(self) -> str:
        return self._ident

    def send(self, envelope: Envelope, body: bytes, timeout: float) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, body + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            raise DeliveryError(f"append to {self.path}: {e.strerror or e}") from e


def read_jsonl(path: Path) -> Iterator[Envelope]:
    """Every complete envelope line of ``path`` in order (a torn or foreign line is skipped).
    A file over the budget of a sink log is refused (InputError) before it is read."""
    check_size(path, "sink-log")
    with path.open("rb") as f:
        for line in f:
            envelope = decode_line(line)
            if envelope is not None:
                yield envelope


def decode_line(line: bytes) -> Envelope | None:
    """One envelope line, or None for a torn or foreign line."""
    try:
        value: Any = json.loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict) or "deliveryId" not in value:
        return None
    return value


def latest_by_id(envelopes: Iterable[Envelope]) -> dict[str, Envelope]:
    """One envelope per ``deliveryId``: the last one seen (a re-send may carry more)."""
    out: dict[str, Envelope] = {}
    for envelope in envelopes:
        out[str(envelope["deliveryId"])] = envelope
    return out
