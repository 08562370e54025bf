"""Fixtures of the platform tests."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def gs_kai() -> dict[str, Any]:
    return {"schedulerName": "kai-scheduler", "queue": "team-a"}
