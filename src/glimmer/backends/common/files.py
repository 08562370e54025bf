"""Small JSON state files kept the way the file run store keeps its runs: every write atomic
(a temporary file beside it, flushed to disk, renamed over it — a crash leaves the old file
whole, never half of one) and a read-modify-write held under an ``fcntl.flock`` lock file.

Standard library only: the local substrate's supervisor process imports this and nothing
heavier, so that it starts in milliseconds.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename (readers see the old file or the new)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, value: Any) -> None:
    """``value`` as JSON at ``path``, atomically."""
    write_atomically(path, json.dumps(value, sort_keys=True))


def read_json(path: Path) -> Any | None:
    """The JSON value at ``path``, or None when there is no such file."""
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


@contextmanager
def locked(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created when missing) for the block; the
    kernel releases it when the holder dies, so a crash never leaves a lock behind."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
