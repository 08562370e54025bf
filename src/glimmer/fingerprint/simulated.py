"""The identity of a node of a simulated fleet: its GPUs from the fleet's SKU table (driver
name, compute capability, usable memory, the simulated driver version), its NIC ports, and the
hardware subset of the labels the simulator gives its Node. UUIDs and serials are left out, as
on a real node: an identical replacement part is not drift."""

from __future__ import annotations

from collections.abc import Mapping

from glimmer.fingerprint.identity import Gpu, Identity, Nic
from glimmer.fingerprint.keys import MAX_GPUS
from glimmer.fingerprint.labels import ARCH_LABEL, kubernetes_arch, salient_labels
from glimmer.fleet.records import NodeRecord
from glimmer.fleet.topology import Topology
from glimmer.sim.device_facts import facts
from glimmer.sim.runners.figures import part
from glimmer.sim.runners.gpu_common import DRIVER_VERSION

_VENDORS = ("nvidia", "amd", "intel", "habana", "tenstorrent")


def _gpus(topo: Topology, node: NodeRecord) -> list[Gpu]:
    out: list[Gpu] = []
    for i in list(node.gpu_indices)[:MAX_GPUS]:
        sku = topo.models[int(topo.gpu_model[i])]
        name = facts(sku.key).model_name
        head = name.split(" ", 1)[0].lower()
        figures = part(sku.key)
        usable = int(topo.gpu_usable_memory[i])
        out.append(
            Gpu(
                index=len(out),
                vendor=head if head in _VENDORS else "",
                model=name,
                arch=f"sm_{figures.compute_cap.replace('.', '')}" if figures else "",
                memory_bytes=usable if usable > 0 else sku.memory_bytes,
                driver_version=DRIVER_VERSION,
            )
        )
    return out


def _nics(node: NodeRecord) -> list[Nic]:
    return [Nic(name=n.name, role=n.role, speed_mbps=round(n.speed_gbps * 1000)) for n in node.nics]


def capture_simulated(
    topo: Topology,
    hostname: str,
    *,
    labels: Mapping[str, str] | None = None,
    kernel: str = "",
    os_image: str = "",
) -> Identity:
    """The identity of fleet node ``hostname`` (KeyError if the fleet has none), with the
    Node's ``labels``, ``kernel`` and ``os_image`` as the simulator reports them."""
    node = topo.nodes[topo.node_index[hostname]]
    kept = salient_labels(labels or {})
    kept.setdefault(ARCH_LABEL, kubernetes_arch(node.arch))
    return Identity.of(
        os_image=os_image,
        kernel=kernel,
        labels=kept,
        gpus=_gpus(topo, node),
        nics=_nics(node),
    )
