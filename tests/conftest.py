"""Shared fixtures: where the shared requirements folder lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.slurm_cluster import (  # noqa: F401 (the Slurm cluster's fixtures and hook)
    pytest_collection_modifyitems,
    slurm_cluster,
    slurm_cluster_session,
)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"the shared requirements folder is missing: {SHARED}")
    return SHARED
