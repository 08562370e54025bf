"""The request journal: one JSON line per request, so a test learns what a client did (the
exact verbs an operator uses, for its least-privilege RBAC) over the file, never by reaching
into the stand-in's memory."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO, Any


class Journal:
    def __init__(self, path: Path | None) -> None:
        self._file: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Line-buffered: a reader sees each request as soon as it is answered.
            self._file = path.open("a", buffering=1, encoding="utf-8")

    def record(self, entry: dict[str, Any]) -> None:
        if self._file is not None:
            self._file.write(json.dumps({"time": round(time.time(), 6), **entry}) + "\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read(path: Path) -> list[dict[str, Any]]:
    """The journal's entries, oldest first (a missing journal has none)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
