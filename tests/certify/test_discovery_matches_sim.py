"""The cluster's discovery and the simulator's target selection pick the same nodes on every
built-in fleet (one rule, two substrates: specs/certify.md §3.2 against certify/run.py)."""

from __future__ import annotations

from typing import Any

import pytest

from glimmer.backends.sim.certify import sim_nodes
from glimmer.certify.discovery import discover, target_spec
from glimmer.certify.platform.detect import node_object
from glimmer.certify.run import target_nodes
from glimmer.errors import InputError
from glimmer.fleet.load import builtin_names, load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim


def _targets(first: str, second: str, rack: str) -> list[dict[str, Any]]:
    return [
        {},
        {"includeUnschedulable": True},
        {"nodeNames": [first, second]},
        {"nodeSelector": {"topology.glimmer.ai/rack": rack}},
        {
            "matchExpressions": [
                {"key": "topology.glimmer.ai/rack", "operator": "NotIn", "values": [rack]}
            ]
        },
        {"taintSelectors": [{"key": "node.kubernetes.io/unschedulable"}]},
    ]


@pytest.mark.parametrize("fleet", builtin_names())
def test_cluster_discovery_selects_what_the_simulator_selects(fleet: str) -> None:
    topo = load_topology(fleet)
    first = topo.nodes[0].hostname
    twin = FleetSim(topo, [Fault("gpu_node_drain", f"node:{first}")])
    infos = sim_nodes(twin)
    objects = [node_object(n) for n in infos]
    second = infos[-1].name
    rack = infos[-1].labels["topology.glimmer.ai/rack"]
    compared = 0
    for target in _targets(first, second, rack):
        spec = target_spec(target)
        try:
            sim = target_nodes(fleet, infos, spec)
        except InputError:  # nothing selected on the simulator: the cluster finds nothing too
            with pytest.raises(InputError, match=r"No target nodes found"):
                discover(objects, target)
            continue
        got = discover(objects, target)
        assert got.names == tuple(n.name for n in sim.nodes), target
        assert got.arch == sim.gpu, target
        assert got.arch_excluded == sim.excluded, target
        compared += 1
    assert compared >= (4 if len(infos) > 1 else 1)
