"""The execution record: one JSON file per execution, the local substrate's "pod".

``<state>/executions/<namespace>/<run>/<name>.json`` holds what the engine asked for (the
spec), how to launch it, and what happened: the supervisor's and the runner's identity (pid and
start time), start and end times, the exit code and the reason. The creating process writes
the record first (the claim), then the supervisor it spawns fills it in; every write is atomic
and made under the record's lock (``<name>.lock``). The runner's output is ``<name>.log``.

Standard library only, as the supervisor reads and writes records too.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glimmer.backends.common.files import locked, read_json, write_json

SUFFIX = ".json"


@dataclass(frozen=True)
class RecordPath:
    """Where one execution's files are."""

    record: Path

    @property
    def log(self) -> Path:
        return self.record.with_suffix(".log")

    @property
    def work(self) -> Path:
        """The runner's working directory (created by its supervisor)."""
        return self.record.with_suffix(".work")

    @property
    def lock(self) -> Path:
        return self.record.with_suffix(".lock")

    def locked(self) -> AbstractContextManager[None]:
        return locked(self.lock)

    def read(self) -> dict[str, Any] | None:
        value = read_json(self.record)
        return value if isinstance(value, dict) and "spec" in value else None

    def write(self, record: dict[str, Any]) -> None:
        write_json(self.record, record)

    def remove(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
        for path in (self.record, self.log, self.lock):
            path.unlink(missing_ok=True)


class RecordDir:
    """The execution records under ``root`` (``<state>/executions``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def of(self, namespace: str, run: str, name: str) -> RecordPath:
        return RecordPath(self.root / (namespace or "default") / run / f"{name}{SUFFIX}")

    def of_run(self, namespace: str, run: str) -> Iterator[RecordPath]:
        """Every record filed under the run's name (of any uid)."""
        folder = self.root / (namespace or "default") / run
        if not folder.is_dir():
            return
        for path in sorted(folder.glob(f"*{SUFFIX}")):
            if not path.name.startswith("."):  # a write in progress
                yield RecordPath(path)

    def find(self, namespace: str, name: str) -> RecordPath | None:
        """The record of the execution ``name`` in any run of the namespace."""
        for path in (self.root / (namespace or "default")).glob(f"*/{name}{SUFFIX}"):
            return RecordPath(path)
        return None

    def all(self) -> Iterator[RecordPath]:
        for path in sorted(self.root.glob(f"*/*/*{SUFFIX}")):
            if not path.name.startswith("."):
                yield RecordPath(path)


def now_text() -> str:
    """This host's time now, as records store it (ISO 8601, UTC)."""
    return datetime.now(UTC).isoformat()


def parse_time(text: object) -> datetime | None:
    return datetime.fromisoformat(text) if isinstance(text, str) and text else None
