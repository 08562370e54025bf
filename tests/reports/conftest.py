"""Shared helpers of the report tests: the checked-in runs, a fixed stamp, tool lookups."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from glimmer.api.run import BurnInRun
from glimmer.reports import Stamp, read_run

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"
TOOLS = Path(__file__).resolve().parents[1] / "tools"
RUN_NAMES = sorted(p.stem for p in RUNS.glob("*.json"))

# Reports carry who made them and when; tests pin both so output is byte-for-byte stable.
STAMP = Stamp("glimmer-burnin test", datetime(2026, 10, 3, 12, 0, tzinfo=UTC))


def load_run(name: str) -> BurnInRun:
    """One of the checked-in runs (see fixture_runs.py for how they were made)."""
    return read_run(str(RUNS / f"{name}.json"))


def ensure_tool(command: str, installer: str) -> str:
    """The path of ``command``, running its installer when missing. Under CI a tool that cannot
    be had fails the test (a skipped schema check would pass silently); elsewhere it skips."""
    found = shutil.which(command)
    if found is None and (TOOLS / installer).exists():
        subprocess.run([str(TOOLS / installer)], check=False, capture_output=True, timeout=900)
        found = shutil.which(command)
    if found is None:
        reason = f"{command} is not available and {installer} could not install it"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = "GLIMMER_UPDATE_GOLDEN"


def check_golden(name: str, text: str) -> None:
    """Compare ``text`` with ``golden/<name>``; with GLIMMER_UPDATE_GOLDEN=1, rewrite it."""
    path = GOLDEN / name
    if os.environ.get(UPDATE) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8") if path.exists() else None
    assert text == expected, (
        f"tests/reports/golden/{name} differs from the rendered report. If the change is "
        f"intended, regenerate with: {UPDATE}=1 .venv/bin/pytest tests/reports -q "
        "and review the diff"
    )
