"""The fabric a cluster declares through node labels (certify/fabric.py) is the fabric the
simulator's substrate reads from the ports themselves, on every built-in fleet: the labels the
simulated nodes carry say everything a network-path group's expectation needs."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from glimmer.backends.sim.certify import TwinSubstrate
from glimmer.backends.sim.certify.nodes import fleet_nodes
from glimmer.certify.fabric import fabric_from_labels, fabric_labels, fabric_over
from glimmer.certify.grouping import BACKEND_GBPS_LABEL, BACKEND_RAILS_LABEL, NodeInfo, partition
from glimmer.certify.substrate import Fabric
from glimmer.errors import InputError
from glimmer.fleet.load import builtin_names, load_topology
from glimmer.sim.twin import FleetSim


def _groups(infos: list[NodeInfo], seed: int) -> list[tuple[str, ...]]:
    """Every node alone, the whole fleet, consecutive pairs, the grouping's groups of 2 and 8,
    and random groups of 2 to 8 nodes (seeded)."""
    names = [n.name for n in infos]
    rng = random.Random(seed)
    out = [(n,) for n in names[:64]] + [tuple(names)]
    out += [tuple(names[i : i + 2]) for i in range(0, min(len(names) - 1, 64))]
    for npj in (2, 8):
        if len(names) >= npj:
            out += [g.nodes for g in partition(infos, npj)]
    out += [tuple(rng.sample(names, rng.randint(2, 8))) for _ in range(64) if len(names) >= 8]
    return out


@pytest.mark.parametrize("fleet", builtin_names())
def test_labels_declare_the_twins_fabric_on_every_builtin_fleet(fleet: str) -> None:
    topo = load_topology(fleet)
    twin = TwinSubstrate(FleetSim(topo, []))
    infos = fleet_nodes(topo)
    fabric = fabric_over(infos)
    groups = _groups(infos, seed=17)
    for group in groups:
        assert fabric(group) == twin.fabric(group), group
    has_ports = any(nic.role == "backend" for n in topo.nodes for nic in n.nics)
    assert any(fabric(g) is not None for g in groups) == has_ports


def test_a_group_takes_the_fewest_rails_and_the_slowest_port() -> None:
    nodes = [
        NodeInfo("a", fabric_labels(8, 400.0)),
        NodeInfo("b", fabric_labels(4, 400.0)),
        NodeInfo("c", fabric_labels(8, 200.0)),
    ]
    assert fabric_from_labels(nodes) == Fabric(4, 200.0)
    assert fabric_from_labels(nodes[:1]) == Fabric(8, 400.0)


def test_a_node_that_declares_nothing_leaves_its_group_without_expectation() -> None:
    declared = NodeInfo("a", fabric_labels(8, 400.0))
    assert fabric_from_labels([declared, NodeInfo("b")]) is None
    assert fabric_from_labels([]) is None
    assert fabric_labels(0, 400.0) == {}
    assert fabric_over([declared])(("a", "not-discovered")) is None


def test_a_fractional_port_speed_is_declared_and_read_back() -> None:
    labels = fabric_labels(2, 12.5)
    assert labels == {BACKEND_RAILS_LABEL: "2", BACKEND_GBPS_LABEL: "12.5"}
    assert fabric_from_labels([NodeInfo("a", labels)]) == Fabric(2, 12.5)


@pytest.mark.parametrize(
    ("label", "value"),
    [
        (BACKEND_RAILS_LABEL, "eight"),
        (BACKEND_RAILS_LABEL, "-1"),
        (BACKEND_GBPS_LABEL, "fast"),
        (BACKEND_GBPS_LABEL, "0"),
        (BACKEND_GBPS_LABEL, "nan"),
    ],
)
def test_an_unreadable_declaration_is_refused_naming_node_and_label(label: str, value: str) -> None:
    node = NodeInfo("gpu-7", {**fabric_labels(8, 400.0), label: value})
    with pytest.raises(InputError, match=rf"Node/gpu-7, field metadata\.labels\[{label}\]") as e:
        fabric_from_labels([node])
    assert repr(value) in str(e.value)


def test_a_node_whose_rails_have_a_gap_declares_no_fabric() -> None:
    topo = load_topology("ai-factory")
    first = topo.nodes[0]
    backend = [n for n in first.nics if n.role == "backend"]
    gapped = tuple(replace(n, rail=n.rail + 1) if n is backend[0] else n for n in first.nics)
    topo = replace(topo, nodes=(replace(first, nics=gapped), *topo.nodes[1:]))
    declared = {n.name: n.labels for n in fleet_nodes(topo)}
    assert BACKEND_RAILS_LABEL not in declared[first.hostname]
    assert BACKEND_RAILS_LABEL in declared[topo.nodes[1].hostname]
