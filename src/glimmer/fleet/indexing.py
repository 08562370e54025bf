"""The key index of a built topology, and the check that declared faults aim at real things."""

from __future__ import annotations

from itertools import repeat

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
    # The GPUs, most of the index, in one C-level pass (zip and repeat, no bytecode per GPU).
    n_gpus = len(topo.gpu_keys)
    kinds = zip(repeat("gpu", n_gpus), range(n_gpus), strict=True)
    index.update(zip(topo.gpu_keys, kinds, strict=True))
    for r in topo.racks:
        index[r.key] = ("rack", r.index)
        index.setdefault(f"site:{r.site}", ("site", -1))
    for n in topo.nodes:
        i = n.index
        index[n.key] = ("node", i)
        index[ids.device_key(n.bmc_name)] = ("bmc", i)
        if n.tray_key:
            index[n.tray_key] = ("compute_tray", i)
        # One (kind, index) value for all of a node's CPUs, one for its NICs: a tuple per entry
        # was some 150k small objects at 100k GPUs, memory a bigger fleet pays for in misses.
        index.update(dict.fromkeys(n.cpu_keys, ("cpu", i)))
        index.update(dict.fromkeys([nic.key for nic in n.nics], ("nic", i)))
        if n.storage_client:
            index[n.storage_client] = ("client", i)
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
