"""The simulator backend over a fleet: its nodes are the fleet's nodes (hostname, GPU product,
pool and rack labels), and its runner is the simulated runner over the fleet's state."""

from __future__ import annotations

from glimmer.engine.backend import NodeView
from glimmer.fleet.topology import Topology

PRODUCT_LABEL = "nvidia.com/gpu.product"
MODEL_LABEL = "glimmer.ai/gpu-model"
POOL_LABEL = "glimmer.ai/pool"
RACK_LABEL = "glimmer.ai/rack"
HOSTNAME_LABEL = "kubernetes.io/hostname"
SIM_KERNEL = "6.8.0-glimmer-sim"
SIM_OS = "Ubuntu 24.04 LTS (simulated)"


def fleet_nodes(topo: Topology) -> list[NodeView]:
    """One node per fleet node, schedulable, unannotated."""
    products = {sku.key: sku.product for sku in topo.models}
    out = []
    for node in topo.nodes:
        labels = {
            HOSTNAME_LABEL: node.hostname,
            MODEL_LABEL: node.model,
            POOL_LABEL: node.pool,
            RACK_LABEL: topo.racks[node.rack].name,
        }
        if node.gpu_count and node.model in products:
            labels[PRODUCT_LABEL] = products[node.model]
        out.append(
            NodeView(
                name=node.hostname,
                labels=labels,
                kernel=SIM_KERNEL,
                os_image=SIM_OS,
                arch=node.arch,
            )
        )
    return out
