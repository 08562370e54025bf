"""``--backend NAME`` maps to a factory (backends/common/registry.py): sim builds the simulator
over a fleet twin, the planned substrates answer "not available yet", and the CLI reaches the
simulator only through the registry's sim entry."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from glimmer.backends.common.registry import REGISTRY, SIM, SimBackend, entry, names
from glimmer.errors import InputError
from glimmer.fleet.load import load_topology
from glimmer.sim.twin import FleetSim

CLI = Path(__file__).resolve().parents[3] / "src" / "glimmer" / "cli"
# Modules whose owner moves them onto the registry separately (see the issue 11 notes).


def test_sim_is_the_one_available_backend_and_builds_a_simulator_over_the_twin() -> None:
    assert names(available=True) == ["sim"]
    topo = load_topology("ai-factory")
    backend = entry("sim").factory(FleetSim(topo, []), seed=3)  # type: ignore[misc]
    assert isinstance(backend, SimBackend)
    assert sorted(backend.nodes) == sorted(n.name for n in SIM.nodes(topo))


@pytest.mark.parametrize("name", ["local", "kubernetes", "slurm"])
def test_a_planned_substrate_is_known_but_not_available_yet(name: str) -> None:
    assert name in REGISTRY and not REGISTRY[name].available
    with pytest.raises(InputError, match="not available yet: only 'sim'"):
        entry(name)


def test_an_unknown_backend_names_every_known_one() -> None:
    with pytest.raises(InputError, match=r"unknown backend \(known: sim, local, kubernetes, slurm"):
        entry("nomad")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_cli_reaches_substrates_only_through_the_registry() -> None:
    modules = sorted(CLI.glob("*.py"))
    assert len(modules) > 10
    offenders = {
        p.name: sorted(m for m in _imports(p) if m.startswith("glimmer.backends.")) for p in modules
    }
    allowed = {"glimmer.backends.common.registry"}
    assert {k: v for k, v in offenders.items() if set(v) - allowed} == {}


def test_the_sim_entry_offers_the_twins_certification_for_the_certify_command() -> None:
    from glimmer.backends.sim.certify import certify, fleet_twin

    assert SIM.certify is certify and SIM.fleet_twin is fleet_twin
