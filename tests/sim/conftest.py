"""Fixtures of the simulator tests."""

from __future__ import annotations

import pytest
from reference_fleet import Reference, build_reference


@pytest.fixture
def reference() -> Reference:
    return build_reference()
