"""Fixtures of the local substrate's tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from local_world import runner_command


@pytest.fixture
def runner(tmp_path: Path) -> list[str]:
    """The fake runner's command line (written under tmp_path)."""
    return runner_command(tmp_path)
