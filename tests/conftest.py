"""Shared fixtures: where the shared requirements folder lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.k8s_api import k8s_api, kubectl  # noqa: F401 (fixtures)
from tests.slurm_cluster import slurm_cluster, slurm_cluster_session  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.fail(f"the shared requirements folder is missing: {SHARED}")
    return SHARED
