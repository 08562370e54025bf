"""What a certification costs grows with the fleet, not with its square (issue 12 item 3): the
target's architecture split compares names, never nodes, and on the simulator each node's view
is built once per start time and fault set, however many isolation rounds ask about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from glimmer.backends.sim.certify import certify as sim_certify
from glimmer.backends.sim.certify import views as views_module
from glimmer.backends.sim.certify.views import NodeViews
from glimmer.certify.grouping import PRODUCT_LABEL, RACK_LABEL, NodeInfo
from glimmer.certify.jobs import Job, JobLog
from glimmer.certify.run import certify
from glimmer.certify.spec import CertSpec, from_text
from glimmer.certify.substrate import Fabric
from glimmer.fleet.load import load_topology
from glimmer.sim.faults import Fault
from glimmer.sim.runners.node import NodeView
from glimmer.sim.runners.node import view as plain_view
from glimmer.sim.twin import FleetSim

TOPO = load_topology("ai-factory")
NVL = sorted(n.hostname for n in TOPO.nodes if n.hostname.startswith("nvl-"))


def _spec(categories: list[dict[str, Any]], target: dict[str, Any] | None = None) -> CertSpec:
    return from_text(
        yaml.safe_dump(
            {
                "apiVersion": "certify.glimmer.ai/v1alpha1",
                "kind": "Certification",
                "metadata": {"name": "cost"},
                "spec": {"target": target or {}, "categories": categories},
            }
        )
    )


@dataclass
class Mixed:
    """A substrate of ``count`` H100 nodes and every tenth one a B200, whose diagnostics pass."""

    count: int

    name = "mixed"
    platform = "canned"
    taint_note = ""

    def product(self, i: int) -> str:
        return "NVIDIA-B200" if i % 10 == 0 else "NVIDIA-H100-80GB-HBM3"

    def nodes(self) -> list[NodeInfo]:
        return [
            NodeInfo(f"n-{i:04d}", {PRODUCT_LABEL: self.product(i), RACK_LABEL: f"r{i // 8}"})
            for i in range(self.count)
        ]

    def fabric(self, nodes: tuple[str, ...]) -> Fabric | None:
        return None

    def run(self, job: Job) -> JobLog:
        return JobLog("DCGM diag level 1\nPASS\n", 0, elapsed_s=60.0)


def test_other_architectures_are_excluded_by_name_without_comparing_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compared = []
    plain_eq = NodeInfo.__eq__

    def counting_eq(self: NodeInfo, other: object) -> bool:
        compared.append(self.name)
        return plain_eq(self, other)

    monkeypatch.setattr(NodeInfo, "__eq__", counting_eq)
    r = certify(Mixed(300), _spec([{"domain": "diagnostics", "variant": "dcgm-level1"}]))
    assert r.gpu == "h100" and r.total_nodes == 270
    assert list(r.excluded_nodes) == [f"n-{i:04d}" for i in range(0, 300, 10)]
    # Testing each node against the kept list compared dataclasses pairwise: 270 x 30 here.
    assert compared == []


def test_a_diagnose_certification_builds_each_node_view_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[str] = []

    def counting_view(twin: FleetSim, name: str, started_at: float) -> NodeView | None:
        built.append(name)
        return plain_view(twin, name, started_at)

    monkeypatch.setattr(views_module, "view", counting_view)
    twin = FleetSim(TOPO, [Fault("nic_degraded", "nic:nvl-node-0003/eth2")])
    cat = {"domain": "communication", "variant": "nccl-all-reduce"}
    spec = _spec(
        [{**cat, "options": {"testScale": "diagnose", "enableMNNVL": False}}],
        {"nodeSelector": {PRODUCT_LABEL: "NVIDIA-GB200"}},
    )
    r = sim_certify(twin, spec)
    assert r.failed_nodes == ["nvl-node-0003"]
    isolation = r.categories[0].isolation
    assert isolation is not None and isolation.rounds > 1
    # Several rounds of jobs and fabric questions over the rack, one view per node.
    assert sorted(built) == NVL


def test_node_views_are_reused_for_a_start_time_and_rebuilt_for_new_faults() -> None:
    twin = FleetSim(TOPO)
    views = NodeViews(twin)
    first = views.get("nvl-node-0003")
    assert first is not None and views.get("nvl-node-0003") is first
    assert first.nic_level("nic:nvl-node-0003/eth2", "nic_degraded") == 0.0
    assert views.get("nvl-node-0003", 60.0) is not first  # another start time, its own view
    twin.faults = (*twin.faults, Fault("nic_degraded", "nic:nvl-node-0003/eth2"))
    again = views.get("nvl-node-0003")
    assert again is not None and again is not first
    assert again.nic_level("nic:nvl-node-0003/eth2", "nic_degraded") == 1.0
    assert views.many(["nvl-node-0003", "no-such-node"]) == [again, None]
