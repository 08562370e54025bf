"""The ConfigMap sink's semantics as a folder (specs/burnin.md §5.6), for the simulator and
this host: one entry per ``deliveryId``, the envelope JSON as its value.

An entry is written whole (temporary file, ``fsync``, rename) so a reader never sees half of
one. An identical existing entry is left alone; a different one is replaced (a re-sent terminal
envelope may carry more results). Like a ConfigMap, the folder has a budget: if all entries
together would pass 900 KiB the write is refused as permanent, asking to rotate or shard —
a ConfigMap that large could not be stored, and retrying would not make it smaller.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from glimmer.sinks.envelope import Envelope
from glimmer.sinks.errors import DeliveryError

BUDGET_BYTES = 921_600  # 900 KiB, the ConfigMap sink's object budget
SUFFIX = ".json"
_ID = re.compile(r"[0-9a-f]{32}")


class DirectorySink:
    """Entries ``<deliveryId>.json`` under ``root``."""

    def __init__(self, root: Path, *, name: str = "", budget: int = BUDGET_BYTES) -> None:
        self.root = root
        self.budget = budget
        self._ident = name or f"dir={root}"

    @property
    def ident(self) -> str:
        return self._ident

    def send(self, envelope: Envelope, body: bytes, timeout: float) -> None:
        key = str(envelope.get("deliveryId", ""))
        if not _ID.fullmatch(key):
            raise DeliveryError(f"{self.root}: {key!r} is not a deliveryId", permanent=True)
        path = self.root / (key + SUFFIX)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            if path.exists() and path.read_bytes() == body:
                return  # identical: nothing to do (idempotent)
            total = self._total(excluding=path) + len(key) + len(body)
            if total > self.budget:
                raise DeliveryError(
                    f"{self.root}: storing {key} would make {total} bytes, over the "
                    f"{self.budget}-byte budget; rotate or shard the sink",
                    permanent=True,
                )
            tmp = path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, body)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError as e:
            raise DeliveryError(f"write {path}: {e.strerror or e}") from e

    def _total(self, excluding: Path) -> int:
        total = 0
        for entry in self.root.glob("*" + SUFFIX):
            if entry != excluding:
                total += len(entry.stem) + entry.stat().st_size
        return total


def read_directory(root: Path) -> Iterator[tuple[Path, Envelope]]:
    """Every entry of a directory sink (name order), skipping files that are not envelopes."""
    for path in sorted(root.glob("*" + SUFFIX)):
        try:
            value: Any = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        if isinstance(value, dict) and "deliveryId" in value:
            yield path, value
