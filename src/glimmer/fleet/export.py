"""Export a topology: a JSON document (stable, byte-identical across rebuilds) and Graphviz dot."""

from __future__ import annotations

from typing import Any

from glimmer.fleet.topology import Topology


def summary(topo: Topology) -> dict[str, Any]:
    """Counts of everything in the fleet."""
    return {
        "name": topo.name,
        "seed": topo.seed,
        "sites": len({r.site for r in topo.racks}),
        "racks": len(topo.racks),
        "pools": len(topo.pools),
        "nodes": len(topo.nodes),
        "gpus": topo.gpu_count,
        "nvlinkDomains": len(topo.domains),
        "nvswitches": len(topo.nvswitches),
        "nvlinkEdges": topo.edge_count,
        "fabrics": len(topo.fabrics),
        "fabricSwitches": len(topo.fabric_switches),
        "nicPorts": sum(len(n.nics) for n in topo.nodes),
        "models": {
            m.key: int((topo.gpu_model == i).sum())
            for i, m in enumerate(topo.models)
            if (topo.gpu_model == i).any()
        },
    }


def _gpu(topo: Topology, i: int) -> dict[str, Any]:
    domain = int(topo.gpu_domain[i])
    part = int(topo.gpu_partition[i])
    out: dict[str, Any] = {
        "key": topo.gpu_keys[i],
        "slot": int(topo.gpu_slot[i]),
        "uuid": topo.gpu_uuids[i],
        "boardSerial": topo.gpu_board_serials[i],
        "pciBusId": topo.gpu_pci_bus_ids[i],
        "model": topo.models[int(topo.gpu_model[i])].key,
    }
    if domain >= 0:
        out["domain"] = topo.domains[domain].key
    if part >= 0:
        out["partition"] = topo.partitions[part].key
    if topo.gpu_module[i] >= 0:
        out["hgxModuleId"] = int(topo.gpu_module[i])
    if topo.gpu_usable_memory[i]:
        out["usableMemoryBytes"] = int(topo.gpu_usable_memory[i])
    return out


def to_json(topo: Topology, *, edges: bool = True) -> dict[str, Any]:
    """The whole topology as plain data, in canonical (key) order."""
    nodes = []
    for n in topo.nodes:
        nodes.append(
            {
                "key": n.key,
                "hostname": n.hostname,
                "pool": n.pool,
                "ordinal": n.ordinal,
                "shape": n.shape,
                "model": n.model,
                "rack": topo.racks[n.rack].key,
                "slot": n.slot,
                "heightU": n.height_u,
                "tray": n.tray_key or None,
                "trayId": n.tray_id or None,
                "uid": n.uid,
                "serial": n.serial,
                "ip": n.ip or None,
                "bmc": {"name": n.bmc_name, "ip": n.bmc_ip or None, "serial": n.bmc_serial},
                "cpus": n.cpu_keys,
                "storageClient": n.storage_client or None,
                "nics": [
                    {
                        "key": c.key,
                        "fabric": c.fabric,
                        "role": c.role,
                        "rail": c.rail if c.rail >= 0 else None,
                        "switch": c.switch_key or None,
                        "port": c.port_key or None,
                        "speedGbps": c.speed_gbps,
                        "ip": c.ip or None,
                    }
                    for c in n.nics
                ],
                "gpus": [_gpu(topo, i) for i in n.gpu_indices],
            }
        )
    doc: dict[str, Any] = {
        "summary": summary(topo),
        "racks": [
            {
                "key": r.key,
                "shape": r.shape,
                "cooling": r.cooling,
                "heightU": r.height_u,
                "devices": r.device_keys,
            }
            for r in topo.racks
        ],
        "nodes": nodes,
        "domains": [
            {
                "key": d.key,
                "kind": d.kind,
                "rack": topo.racks[d.rack].key,
                "node": topo.nodes[d.node].key if d.node >= 0 else None,
                "correlated": d.correlated,
                "linksPerGpu": d.links_per_gpu,
                "gpus": [topo.gpu_keys[g] for g in d.gpus],
                "partitions": {p.key: [topo.gpu_keys[g] for g in p.gpus] for p in d.partitions},
                "switchTrays": d.switch_trays,
                "switches": [
                    {
                        "key": topo.nvswitches[s].key,
                        "name": topo.nvswitches[s].name,
                        "serial": topo.nvswitches[s].serial,
                        "ports": topo.nvswitches[s].port_count,
                    }
                    for s in d.switches
                ],
            }
            for d in topo.domains
        ],
        "fabrics": [
            {
                "key": f.key,
                "role": f.role,
                "site": f.site,
                "switches": f.switches,
                "links": [list(link) for link in f.links],
            }
            for f in topo.fabrics
        ],
        "fabricSwitches": [
            {
                "key": s.key,
                "kind": s.kind,
                "rail": s.rail if s.rail >= 0 else None,
                "scalableUnit": s.scalable_unit or None,
                "ports": len(s.ports),
            }
            for s in topo.fabric_switches
        ],
        "devices": [
            {"key": d.key, "kind": d.kind, "serial": d.serial, "ip": d.management_ip or None}
            for d in topo.devices
        ],
    }
    if edges:
        doc["nvlinkEdges"] = [
            {"key": topo.edge_key(e), "port": topo.edge_port_key(e)} for e in range(topo.edge_count)
        ]
    return doc


def _q(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def to_dot(topo: Topology, *, gpus: bool = False) -> str:
    """Graphviz: racks as clusters of nodes, NICs as node→leaf edges, fabric cables, and
    (with ``gpus``) GPUs inside their node wired to their NVSwitches (one edge per GPU–switch
    pair, labelled with its link count)."""
    out = [f"graph {_q(topo.name)} {{", "  rankdir=LR;", "  node [shape=box, fontsize=10];"]
    for r in topo.racks:
        out.append(f"  subgraph {_q('cluster_' + r.key)} {{")
        out.append(f"    label={_q(r.key + ' (' + r.shape + ', ' + r.cooling + ')')};")
        for n in (n for n in topo.nodes if n.rack == r.index):
            out.append(f"    {_q(n.key)} [label={_q(n.hostname)}];")
            if gpus:
                for g in n.gpu_indices:
                    out.append(f"    {_q(topo.gpu_keys[g])} [shape=ellipse, label={_q(str(g))}];")
                    out.append(f"    {_q(n.key)} -- {_q(topo.gpu_keys[g])} [style=dotted];")
        out.append("  }")
    for fs in topo.fabric_switches:
        out.append(f"  {_q(fs.key)} [shape=hexagon, label={_q(fs.name)}];")
    for n in topo.nodes:
        for c in n.nics:
            if c.switch_key:
                out.append(f"  {_q(n.key)} -- {_q(c.switch_key)} [label={_q(c.name)}];")
    for f in topo.fabrics:
        for a, b in f.links:
            sa, sb = ("switch:" + x.removeprefix("port:").rsplit("/", 1)[0] for x in (a, b))
            out.append(f"  {_q(sa)} -- {_q(sb)} [style=bold];")
    if gpus:
        for nv in topo.nvswitches:
            out.append(f"  {_q(nv.key)} [shape=diamond, label={_q(nv.name)}];")
        pairs: dict[tuple[int, int], int] = {}
        for g, sw_i in zip(topo.edge_gpu.tolist(), topo.edge_switch.tolist(), strict=True):
            pairs[(g, sw_i)] = pairs.get((g, sw_i), 0) + 1
        for (g, sw_i), count in sorted(pairs.items()):
            key, sw = topo.gpu_keys[g], topo.nvswitches[sw_i].key
            out.append(f"  {_q(key)} -- {_q(sw)} [label={_q(str(count))}];")
    out.append("}")
    return "\n".join(out) + "\n"
