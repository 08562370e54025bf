"""The key index of a built topology, and the check that declared faults aim at real things."""

from __future__ import annotations

from glimmer.fleet import identity as ids
from glimmer.fleet.context import BuildContext
from glimmer.fleet.topology import Topology

# The fault-addressable axes of §3.4, for ``<axis>:*`` wildcard targets.
AXES = frozenset(
    {
        "gpu",
        "gpu_node",
        "gpu_rack",
        "gpu_tray",
        "gpu_device",
        "gpu_fabric",
        "gpu_switch",
        "gpu_port",
        "gpu_storage",
        "gpu_scheduler",
        "gpu_project",
        "gpu_workload",
        "nvlink_domain",
        "nvlink_partition",
        "nvlink_switch",
        "nvlink_port",
    }
)


def index_topology(ctx: BuildContext, topo: Topology) -> None:
    """Fill ``topo.index`` (key -> (kind, index)) and check the declared fault targets."""
    index = topo.index
    index.update({k: ("gpu", i) for i, k in enumerate(topo.gpu_keys)})
    for r in topo.racks:
        index[r.key] = ("rack", r.index)
        index.setdefault(f"site:{r.site}", ("site", -1))
    for n in topo.nodes:
        index[n.key] = ("node", n.index)
        index[ids.device_key(n.bmc_name)] = ("bmc", n.index)
        if n.tray_key:
            index[n.tray_key] = ("compute_tray", n.index)
        for cpu in n.cpu_keys:
            index[cpu] = ("cpu", n.index)
        for nic in n.nics:
            index[nic.key] = ("nic", n.index)
        if n.storage_client:
            index[n.storage_client] = ("client", n.index)
    for d in topo.domains:
        index[d.key] = ("domain", d.index)
        for tray in d.switch_trays:
            index[tray] = ("nvswitch_tray", d.index)
    for i, p in enumerate(topo.partitions):
        index[p.key] = ("partition", i)
    for s in topo.nvswitches:
        index[s.key] = ("nvswitch", s.index)
    for f in topo.fabrics:
        index[f.key] = ("fabric", -1)
    for i, sw in enumerate(topo.fabric_switches):
        index[sw.key] = ("fabric_switch", i)
    for i, dev in enumerate(topo.devices):
        index[dev.key] = ("device", i)
    for st in ctx.fleet.spec.storage_clusters:
        index[ids.storage_key(st.name)] = ("storage", -1)
    for key in topo.workload_gpus:
        kind = key.partition(":")[0]
        index[key] = ("workload" if kind == "gpuworkload" else kind, -1)
    for i, fault in enumerate(ctx.fleet.spec.faults):
        axis, _, rest = fault.target.partition(":")
        if rest == "*" and axis in AXES:
            continue
        if topo.kind_of(fault.target) is None:
            raise ctx.error(f"spec.faults[{i}].target", f"unknown fault target {fault.target!r}")
