"""Fixtures for fleet tests: the shipped fleets, and a mutable copy of a declaration to break."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fleet_docs import Doc, builtin_doc, errors_of

from glimmer.errors import InputError
from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology


@pytest.fixture
def doc() -> Doc:
    """A fresh ai-factory declaration (PCIe, HGX and NVL72 pools) to break."""
    return builtin_doc("ai-factory")


@pytest.fixture
def refused() -> Callable[[Doc], list[InputError]]:
    return errors_of


@pytest.fixture(scope="session")
def reference() -> Topology:
    """specs/fleet.md Appendix C (seed ai-factory-fixture)."""
    return load_topology("ai-factory-fixture")


@pytest.fixture(scope="session")
def factory() -> Topology:
    return load_topology("ai-factory")


@pytest.fixture(scope="session")
def hgx() -> Topology:
    return load_topology("hgx-fixture")
