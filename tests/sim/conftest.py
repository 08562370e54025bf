"""Fixtures of the simulator tests."""

from __future__ import annotations

import pytest
from reference_fleet import Reference, build_reference


@pytest.fixture
def reference() -> Reference:
    return build_reference()


@pytest.fixture(scope="session")
def promtool() -> str:
    """Path of ``promtool``. Absent: fail under CI (the set-up must install it), skip otherwise.

    ``tests/tools/ensure_promtool.sh`` installs it (Debian package ``prometheus``).
    """
    import os
    import shutil

    path = shutil.which("promtool")
    if path:
        return path
    message = (
        "promtool is not on PATH; run tests/tools/ensure_promtool.sh "
        "(installs the Debian package 'prometheus')"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)
