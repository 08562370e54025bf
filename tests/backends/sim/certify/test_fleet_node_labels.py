"""The labels the simulated fleet's nodes carry, as GPU feature discovery would write them: one
NVLink clique per NVL72 domain, never one over two racks."""

from __future__ import annotations

from glimmer.api.fleet_load import load_fleet_text
from glimmer.backends.sim.certify.nodes import fleet_nodes
from glimmer.certify.grouping import CLIQUE_LABEL, RACK_LABEL
from glimmer.fleet.build import build
from glimmer.fleet.generate import generate, to_yaml
from glimmer.fleet.load import load_topology


def test_racks_that_name_no_nvlink_domain_are_each_their_own_clique() -> None:
    """A generated NVL72 fleet declares no domain names (each rack's is "default"): the two
    racks' trays are two cliques, each of one rack's 18 trays."""
    loaded = load_fleet_text(to_yaml(generate(144, "nvl72")), "gen.yaml")
    topo = build(loaded.fleet, loaded.source, loaded.lines)
    by_clique: dict[str, set[str]] = {}
    for info in fleet_nodes(topo):
        by_clique.setdefault(info.labels[CLIQUE_LABEL], set()).add(info.labels[RACK_LABEL])
    assert len(by_clique) == 2
    assert all(len(racks) == 1 for racks in by_clique.values()), by_clique
    sizes = [sum(1 for i in fleet_nodes(topo) if i.labels[CLIQUE_LABEL] == c) for c in by_clique]
    assert sizes == [18, 18]


def test_a_domain_name_the_fleet_declares_once_is_the_clique() -> None:
    nodes = {i.name: i.labels for i in fleet_nodes(load_topology("ai-factory"))}
    assert nodes["nvl-node-0000"][CLIQUE_LABEL] == "domain-a"
    assert CLIQUE_LABEL not in nodes["hgx-node-0001"]  # an HGX baseboard is no MNNVL clique
