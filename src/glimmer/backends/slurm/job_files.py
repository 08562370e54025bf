"""Where one execution's files are, and reading what its script wrote back.

Beside the record (``<state>/executions/<ns>/<run>/<name>.json``, the claim and what was
observed) live the batch script (``.sh``), Slurm's output file (``.log``, stdout and stderr),
what the script writes back on the node (``.exit``: the runner's exit code; ``.ready``: the
readiness probe passed; ``.deadline``: the watchdog stopped the runner), the runner's working
directory (``.work``) and the record's lock (``.lock``). The state directory is on a filesystem
the nodes share, so what a job writes on its node is read here.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from glimmer.backends.common.files import read_json

SUFFIX = ".json"


@dataclass(frozen=True)
class JobFiles:
    """Where one execution's files are: ``<state>/executions/<ns>/<run>/<name>.*``."""

    record: Path

    def _with(self, suffix: str) -> Path:
        return self.record.with_suffix(suffix)

    @property
    def script(self) -> Path:
        return self._with(".sh")

    @property
    def log(self) -> Path:
        return self._with(".log")

    @property
    def exit(self) -> Path:
        return self._with(".exit")

    @property
    def ready(self) -> Path:
        return self._with(".ready")

    @property
    def deadline(self) -> Path:
        return self._with(".deadline")

    @property
    def work(self) -> Path:
        """The runner's working directory (created by the script, on its node)."""
        return self._with(".work")

    @property
    def lock(self) -> Path:
        return self._with(".lock")

    def read(self) -> dict[str, Any] | None:
        """The record, or None when there is none (or it is not one)."""
        value = read_json(self.record)
        return value if isinstance(value, dict) and "spec" in value else None

    def runner_exit(self) -> int | None:
        """The runner's exit code as the script recorded it (None: not recorded)."""
        try:
            text = self.exit.read_text().strip()
        except FileNotFoundError:
            return None
        return int(text) if text.lstrip("-").isdigit() else None

    def exited_at(self) -> datetime | None:
        """When the script recorded the exit (the file's time), None when it did not."""
        try:
            stamp = self.exit.stat().st_mtime
        except FileNotFoundError:
            return None
        return datetime.fromtimestamp(stamp).astimezone()

    def remove(self) -> None:
        """Every file of the execution, the record last but the lock."""
        shutil.rmtree(self.work, ignore_errors=True)
        for path in (self.script, self.log, self.exit, self.ready, self.deadline, self.record):
            path.unlink(missing_ok=True)
        self.lock.unlink(missing_ok=True)


class JobDir:
    """The execution files under ``root`` (``<state>/executions``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def of(self, namespace: str, run: str, name: str) -> JobFiles:
        return JobFiles(self.root / (namespace or "default") / run / f"{name}{SUFFIX}")

    def find(self, namespace: str, name: str) -> JobFiles | None:
        """The files of the execution ``name`` in any run of the namespace."""
        for path in (self.root / (namespace or "default")).glob(f"*/{name}{SUFFIX}"):
            return JobFiles(path)
        return None

    def of_run(self, namespace: str, run: str) -> list[JobFiles]:
        """Every execution filed under the run's name (of any uid)."""
        folder = self.root / (namespace or "default") / run
        if not folder.is_dir():
            return []
        found = sorted(folder.glob(f"*{SUFFIX}"))
        return [JobFiles(p) for p in found if not p.name.startswith(".")]  # "." : being written
