"""Target selection on the simulator (specs/certify.md §2.1): taintSelectors and
includeUnschedulable are honoured, never ignored. Simulated nodes carry no taints; a node a
``gpu_node_drain`` fault covers is cordoned and carries the cordon taint."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from glimmer.backends.sim.certify import certify, sim_nodes
from glimmer.certify.grouping import UNSCHEDULABLE_TAINT
from glimmer.certify.spec import from_text
from glimmer.certify.target import select
from glimmer.errors import InputError
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

TOPO = load_topology("ai-factory")
HGX = ["hgx-node-0001", "hgx-node-0002"]
DCGM = {"domain": "diagnostics", "variant": "dcgm-level1"}


def _text(target: dict[str, Any]) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "certify.glimmer.ai/v1alpha1",
            "kind": "Certification",
            "metadata": {"name": "t"},
            "spec": {"target": {"nodeNames": HGX, **target}, "categories": [DCGM]},
        }
    )


def _drained(*nodes: str) -> FleetSim:
    return FleetSim(TOPO, [Fault("gpu_node_drain", f"node:{n}") for n in nodes])


def test_a_drained_node_is_cordoned_and_no_other_node_carries_a_taint() -> None:
    nodes = {n.name: n for n in sim_nodes(_drained("hgx-node-0001"))}
    assert nodes["hgx-node-0001"].unschedulable
    assert [t.key for t in nodes["hgx-node-0001"].taints] == [UNSCHEDULABLE_TAINT]
    assert all(not n.taints and not n.unschedulable for k, n in nodes.items() if k != HGX[0])


def test_cordoned_nodes_are_left_out_unless_the_target_includes_them() -> None:
    twin = _drained("hgx-node-0001")
    every = sim_nodes(twin)
    assert [n.name for n in select(every, from_text(_text({})))] == ["hgx-node-0002"]
    keep = from_text(_text({"includeUnschedulable": True}))
    assert [n.name for n in select(every, keep)] == HGX
    assert certify(twin, keep).total_nodes == 2
    assert certify(twin, from_text(_text({}))).total_nodes == 1


def test_the_cordon_taint_as_a_selector_picks_exactly_the_cordoned_nodes() -> None:
    spec = from_text(_text({"taintSelectors": [{"key": UNSCHEDULABLE_TAINT}]}))
    assert [n.name for n in select(sim_nodes(_drained("hgx-node-0002")), spec)] == [HGX[1]]
    with_effect = {"key": UNSCHEDULABLE_TAINT, "effect": "NoExecute"}
    spec = from_text(_text({"taintSelectors": [with_effect]}))
    assert select(sim_nodes(_drained("hgx-node-0002")), spec) == []


def test_a_taint_no_simulated_node_carries_is_refused_naming_the_field() -> None:
    spec = from_text(_text({"taintSelectors": [{"key": "dedicated", "value": "gpu"}]}))
    with pytest.raises(InputError) as e:
        certify(FleetSim(TOPO), spec)
    assert e.value.location.field == "spec.target.taintSelectors"
    assert "dedicated=gpu:*" in e.value.message


def test_a_target_of_only_cordoned_nodes_names_include_unschedulable() -> None:
    with pytest.raises(InputError) as e:
        certify(_drained(*HGX), from_text(_text({})))
    assert e.value.location.field == "spec.target.includeUnschedulable"
