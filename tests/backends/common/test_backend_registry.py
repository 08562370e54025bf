"""``--backend NAME`` maps to a factory (backends/common/registry.py): sim builds the simulator
over a fleet twin, a planned substrate would answer "not available yet", and the CLI reaches the
simulator only through the registry's sim entry."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from glimmer.backends.common import registry
from glimmer.backends.common.registry import (
    REGISTRY,
    SIM,
    Entry,
    FleetSim,
    SimBackend,
    entry,
    names,
)
from glimmer.errors import InputError
from glimmer.fleet.faultspec import parse_faults
from glimmer.fleet.load import load_topology

CLI = Path(__file__).resolve().parents[3] / "src" / "glimmer" / "cli"


def test_every_substrate_is_available_and_sim_builds_a_simulator_over_the_twin() -> None:
    assert names(available=True) == ["sim", "local", "kubernetes", "slurm"]
    topo = load_topology("ai-factory")
    backend = entry("sim").factory(FleetSim(topo, []), seed=3)  # type: ignore[misc]
    assert isinstance(backend, SimBackend)
    assert sorted(backend.nodes) == sorted(n.name for n in SIM.nodes(topo))


def test_a_planned_substrate_is_known_but_not_available_yet_naming_those_that_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    planned = {**REGISTRY, "nomad": Entry("nomad", "a Nomad cluster")}
    monkeypatch.setattr(registry, "REGISTRY", planned)
    assert not planned["nomad"].available
    with pytest.raises(
        InputError,
        match=r"--backend nomad: not available yet \(available: sim, local, kubernetes, slurm\)",
    ):
        entry("nomad")


def test_an_unknown_backend_names_every_known_one() -> None:
    with pytest.raises(InputError, match=r"unknown backend \(known: sim, local, kubernetes, slurm"):
        entry("nomad")


def _imports(path: Path) -> set[str]:
    # Every import the module's text makes: at the top, inside functions and under
    # TYPE_CHECKING alike (ast.walk reaches them all), and ``from glimmer import sim`` as the
    # package it names. A type-only import still ties the CLI to the simulator's layout, and
    # the registry re-exports the types the CLI annotates with, so none is needed.
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _cli_imports(prefix: str) -> dict[str, list[str]]:
    modules = sorted(CLI.glob("*.py"))
    assert len(modules) > 10
    return {p.name: sorted(m for m in _imports(p) if m.startswith(prefix)) for p in modules}


def test_the_cli_reaches_substrates_only_through_the_registry() -> None:
    registry = "glimmer.backends.common.registry"
    # ``from glimmer.backends.common.registry import SIM`` also names registry.SIM.
    offenders = {
        k: outside
        for k, v in _cli_imports("glimmer.backends.").items()
        if (outside := [m for m in v if m != registry and not m.startswith(f"{registry}.")])
    }
    assert offenders == {}


def test_the_cli_imports_no_simulator_module_even_for_types() -> None:
    offenders = {k: v for k, v in _cli_imports("glimmer.sim").items() if v}
    assert offenders == {}


def test_the_import_check_sees_a_simulator_import_inside_a_function_and_type_checking(
    tmp_path: Path,
) -> None:
    module = tmp_path / "cmd.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from glimmer.sim.twin import FleetSim\n"
        "def run() -> None:\n"
        "    from glimmer import sim\n"
        "    import glimmer.sim.clock\n"
    )
    found = {m for m in _imports(module) if m.startswith("glimmer.sim")}
    assert found == {
        "glimmer.sim.twin",
        "glimmer.sim.twin.FleetSim",
        "glimmer.sim",
        "glimmer.sim.clock",
    }


def test_the_sim_entry_builds_the_twin_of_a_fleet_with_its_faults_planted() -> None:
    topo = load_topology("ai-factory")
    spec = parse_faults(["gpu_low_pstate@gpu:hgx-node-0001/3"])
    twin = SIM.twin(topo, spec, noise=False)
    assert isinstance(twin, FleetSim) and twin.topo is topo
    declared = len(topo.fleet.spec.faults)
    assert [(f.mode, f.target) for f in twin.faults[declared:]] == [
        ("gpu_low_pstate", "gpu:hgx-node-0001/3")
    ]


def test_the_sim_entry_fault_check_refuses_a_fault_the_fleet_cannot_take() -> None:
    check = SIM.fault_check(load_topology("ai-factory"))
    check(parse_faults(["gpu_low_pstate@gpu:hgx-node-0001/3"])[0], "declared fault")
    with pytest.raises(InputError, match="declared fault"):
        check(parse_faults(["gpu_low_pstate@gpu:no-such-node/0"])[0], "declared fault")


def test_the_sim_entry_reads_and_writes_the_twins_clock() -> None:
    start = SIM.parse_time("+0s")
    assert SIM.parse_time("+2h") == start + 7200
    assert SIM.parse_time(SIM.rfc3339(start + 90)) == start + 90
    with pytest.raises(ValueError):
        SIM.parse_time("yesterday")


def test_the_sim_entry_offers_the_twins_certification_for_the_certify_command() -> None:
    from glimmer.backends.sim.certify import certify, fleet_twin

    assert SIM.certify is certify and SIM.fleet_twin is fleet_twin
