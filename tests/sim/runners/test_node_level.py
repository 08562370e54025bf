"""node_level answers what a view of the node would, without building one."""

from __future__ import annotations

from runner_kit import HGX, HGX2, twin_with

from glimmer.fleet.topology import Topology
from glimmer.sim.runners.node import node_level, view


def test_a_nodes_level_is_its_views(factory: Topology) -> None:
    twin = twin_with(
        factory, f"gpu_operand_unavailable@node:{HGX}=0.5", f"gpu_low_pstate@node:{HGX}"
    )
    for node in (HGX, HGX2):
        for started_at in (0.0, 300.0):
            nv = view(twin, node, started_at)
            assert nv is not None
            for mode in ("gpu_operand_unavailable", "gpu_low_pstate", "gpu_xid_burst"):
                assert node_level(twin, node, started_at, mode) == nv.level(mode)
    assert node_level(twin, HGX, 300.0, "gpu_operand_unavailable") == 0.5
    assert node_level(twin, "no-such-node", 0.0, "gpu_low_pstate") is None
