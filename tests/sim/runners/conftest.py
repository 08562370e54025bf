"""Fixtures of the simulated-runner tests: the ai-factory fleet and its healthy twin."""

from __future__ import annotations

import pytest

from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology
from glimmer.sim.twin import FleetSim


@pytest.fixture(scope="session")
def factory() -> Topology:
    return load_topology("ai-factory")


@pytest.fixture(scope="session")
def healthy(factory: Topology) -> FleetSim:
    return FleetSim(factory)
