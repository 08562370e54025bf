"""NVLink domains: one per HGX baseboard (§1.9, §3.3) and one per NVL72 rack (§1.8, §3.2).

HGX edges come from the audited map, vectorised over every HGX node at once. NVL72 edges exist
only where the declaration maps them with sources: no GPU-to-port wiring is ever invented.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from glimmer.api.fleet import Rack
from glimmer.api.fleet_nvlink import EntityMapping, Nvl72NvLink, Partition, SwitchOverride
from glimmer.fleet import identity as ids
from glimmer.fleet import skus
from glimmer.fleet.context import BuildContext, Claims
from glimmer.fleet.drafts import NodeDraft
from glimmer.fleet.hgx_map import h100
from glimmer.fleet.records import DomainRecord, NvSwitchRecord, PartitionRecord

HGX_SWITCHES, HGX_PORTS, HGX_LINKS = 4, 64, 18
NVL72_SWITCH_TRAYS, NVL72_SWITCHES_PER_TRAY, NVL72_PORTS = 9, 2, 72


@dataclass
class NvLinkParts:
    """Domains, partitions, switches and edges as they accumulate."""

    domains: list[DomainRecord] = field(default_factory=list)
    partitions: list[PartitionRecord] = field(default_factory=list)
    switches: list[NvSwitchRecord] = field(default_factory=list)
    edges: list[tuple[npt.NDArray[np.int32], ...]] = field(default_factory=list)
    # First GPU of an HGX board -> the module id of each of its GPUs in slot order (one entry a
    # board, not a dict entry a GPU: 100k GPUs made 100k boxed ints and a table past the caches).
    gpu_module: dict[int, list[int]] = field(default_factory=dict)


def _partitions(
    ctx: BuildContext,
    path: str,
    declared: list[Partition],
    stem: str,
    members: dict[str, int],
    parts: NvLinkParts,
) -> tuple[PartitionRecord, ...]:
    """Default partition of all members, or the declared ones, which must tile the members."""
    if not declared:
        recs = [
            PartitionRecord(ids.partition_key(stem, "default"), "default", tuple(members.values()))
        ]
    else:
        recs, seen, names = [], set[int](), set[str]()
        for pi, p in enumerate(declared):
            if p.name in names or not p.gpus:
                raise ctx.error(f"{path}.partitions[{pi}]", "invalid/duplicate partition")
            names.add(p.name)
            idx = [members.get(g, -1) for g in p.gpus]
            if -1 in idx or seen.intersection(idx) or len(set(idx)) != len(idx):
                raise ctx.error(
                    f"{path}.partitions[{pi}]",
                    "custom partitions overlap or reference nonexistent GPU",
                )
            seen.update(idx)
            recs.append(
                PartitionRecord(ids.partition_key(stem, p.name), p.name, tuple(sorted(idx)))
            )
        if len(seen) != len(members):
            raise ctx.error(f"{path}.partitions", "custom partitions do not cover domain GPUs")
    for r in sorted(recs, key=lambda r: r.key):
        parts.partitions.append(r)
    return tuple(sorted(recs, key=lambda r: r.key))


def _check_entities(
    ctx: BuildContext,
    path: str,
    mappings: list[EntityMapping],
    allowed: set[str],
    reason: str,
    unique_vendor_ids: bool,
) -> None:
    keys: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for mi, m in enumerate(mappings):
        if m.key not in allowed and not _is_member_port(m.key, allowed):
            raise ctx.error(f"{path}.entityMappings[{mi}].key", reason)
        if m.key in keys or (unique_vendor_ids and (m.kind, m.vendor_id) in pairs):
            raise ctx.error(f"{path}.entityMappings[{mi}]", "invalid entity mapping")
        keys.add(m.key)
        pairs.add((m.kind, m.vendor_id))


def _is_member_port(key: str, allowed: set[str]) -> bool:
    if not key.startswith("nvport:"):
        return False
    switch, _, port = key.removeprefix("nvport:").rpartition("/")
    return f"nvswitch:{switch}" in allowed and port.isdigit()


def _switch_overrides(
    ctx: BuildContext, path: str, overrides: list[SwitchOverride], count: int, label: str
) -> dict[int, SwitchOverride]:
    out: dict[int, SwitchOverride] = {}
    for si, s in enumerate(overrides):
        if not 0 <= s.ordinal < count:
            raise ctx.error(f"{path}.switches[{si}].ordinal", f"{label} ordinal out of range")
        if s.ordinal in out:
            raise ctx.error(f"{path}.switches[{si}].ordinal", f"duplicate {label} ordinal")
        out[s.ordinal] = s
    return out


def build_hgx(
    ctx: BuildContext,
    claims: Claims,
    nodes: list[NodeDraft],
    gpu_keys: tuple[str, ...],
    modules: dict[tuple[int, int], int],
    parts: NvLinkParts,
) -> None:
    """One domain per HGX node; edges from the audited H100 map (other SKUs get none)."""
    edge_nodes: list[tuple[int, int, npt.NDArray[np.int16]]] = []  # gpu_start, switch0, modules
    for d in nodes:
        block = d.override.nvlink if d.override else None
        path = f"{d.path}.nodes[*].nvlink"
        domain = block.domain if block else "default"
        stem = ids.hgx_stem(d.site, d.rack_name, d.hostname, domain)
        overrides = _switch_overrides(
            ctx, path, block.switches if block else [], HGX_SWITCHES, "HGX switch"
        )
        first_switch = len(parts.switches)
        for s in range(HGX_SWITCHES):
            key = ids.hgx_switch_key(stem, s)
            o = overrides.get(s)
            name = (o.name if o and o.name else None) or f"{d.hostname}-nvsw-{s}"
            serial = (o.serial if o and o.serial else None) or ids.device_serial(ctx.seed, key)
            claims.claim("hostname", name, f"{path}.switches[{s}].name")
            claims.claim("serial", serial, f"{path}.switches[{s}].serial")
            parts.switches.append(
                NvSwitchRecord(
                    len(parts.switches), key, name, serial, len(parts.domains), -1, s, HGX_PORTS
                )
            )
        members = {gpu_keys[d.gpu_start + s]: d.gpu_start + s for s in range(8)}
        module_ids = [modules.get((d.index, s), s) for s in range(8)]
        if sorted(module_ids) != list(range(8)):
            raise ctx.error(f"{d.path}.gpus", "HGX module IDs must be a permutation of [0,7]")
        parts.gpu_module[d.gpu_start] = module_ids
        partitions = _partitions(ctx, path, block.partitions if block else [], stem, members, parts)
        if block and block.entity_mappings:
            allowed = {ids.domain_key(stem), d.key, *members, *(p.key for p in partitions)}
            allowed.update(s.key for s in parts.switches[first_switch:])
            _check_entities(
                ctx,
                path,
                block.entity_mappings,
                allowed,
                "entity outside HGX node domain membership",
                True,  # (kind, vendor id) is unique on an HGX board too (§1.9)
            )
        sku = skus.lookup(d.pool.gpu_model)
        mapped = sku is not None and sku.hgx_map == "hgx_h100"
        if mapped:
            edge_nodes.append((d.gpu_start, first_switch, np.array(module_ids, dtype=np.int16)))
        parts.domains.append(
            DomainRecord(
                index=len(parts.domains),
                key=ids.domain_key(stem),
                stem=stem,
                name=domain,
                kind="hgx",
                rack=d.rack,
                node=d.index,
                gpus=tuple(members.values()),
                partitions=partitions,
                switches=tuple(range(first_switch, first_switch + HGX_SWITCHES)),
                switch_trays=(),
                correlated=bool(block and block.correlated),
                links_per_gpu=HGX_LINKS if mapped else 0,
                complete_map=mapped,  # the audited map is complete by construction
                entity_keys=tuple(sorted(m.key for m in block.entity_mappings)) if block else (),
            )
        )
        d.domain = parts.domains[-1].index
    if edge_nodes:
        parts.edges.append(_hgx_edges(edge_nodes))


def _hgx_edges(
    nodes: list[tuple[int, int, npt.NDArray[np.int16]]],
) -> tuple[npt.NDArray[np.int32], ...]:
    """Every edge of every mapped HGX node, in (GPU, link) order, without a per-edge loop."""
    table = h100()
    starts = np.array([n[0] for n in nodes], dtype=np.int32)
    switch0 = np.array([n[1] for n in nodes], dtype=np.int32)
    modules = np.stack([n[2] for n in nodes])  # (nodes, 8)
    gpu = (starts[:, None] + np.arange(8, dtype=np.int32)[None, :]).reshape(-1)
    mod = modules.reshape(-1)
    n_gpu = gpu.shape[0]
    edge_gpu = np.repeat(gpu, HGX_LINKS).astype(np.int32)
    edge_link = np.tile(np.arange(HGX_LINKS, dtype=np.int32), n_gpu)
    local_switch = table.switch[mod].reshape(-1).astype(np.int32)
    edge_switch = np.repeat(np.repeat(switch0, 8), HGX_LINKS) + local_switch
    edge_port = table.port[mod].reshape(-1).astype(np.int32)
    return edge_gpu, edge_link, edge_switch, edge_port


def build_nvl72(
    ctx: BuildContext,
    claims: Claims,
    rack_pos: int,
    rack_index: int,
    rack: Rack,
    trays: list[NodeDraft],
    gpu_keys: tuple[str, ...],
    parts: NvLinkParts,
) -> None:
    """The one NVLink domain of an NVL72 rack: 9 switch trays × 2 switches × 72 ports."""
    path = f"spec.racks[{rack_pos}].nvlink"
    block = rack.nvlink
    domain = block.domain if block else "default"
    stem = ids.nvl72_stem(rack.site, rack.name, domain)
    tray_over: dict[int, object] = {}
    for ti, t in enumerate(block.switch_trays if block else []):
        if not 0 <= t.ordinal < NVL72_SWITCH_TRAYS:
            raise ctx.error(f"{path}.switchTrays[{ti}].ordinal", "switch tray out of range")
        if t.ordinal in tray_over:
            raise ctx.error(f"{path}.switchTrays[{ti}].ordinal", "duplicate switch tray")
        tray_over[t.ordinal] = t
    first_switch = len(parts.switches)
    tray_keys: list[str] = []
    for tray in range(NVL72_SWITCH_TRAYS):
        tkey = ids.switch_tray_key(rack.site, rack.name, tray)
        tray_keys.append(tkey)
        over = next((t for t in (block.switch_trays if block else []) if t.ordinal == tray), None)
        if over is not None and over.bmc is not None:  # a switch tray's own BMC
            bmc, bpath = over.bmc, f"{path}.switchTrays[{tray}].bmc"
            claims.claim("hostname", bmc.name, f"{bpath}.name")
            serial = bmc.serial or ids.device_serial(ctx.seed, ids.device_key(bmc.name))
            claims.claim("serial", serial, f"{bpath}.serial")
            claims.claim("IP", bmc.management_ip or "", f"{bpath}.managementIp")
        claims.claim(
            "tray ID",
            (over.id if over and over.id else "") or ids.tray_id(ctx.seed, tkey),
            f"{path}.switchTrays[{tray}].id",
        )
        sw_over: dict[int, SwitchOverride] = {}
        for si, s in enumerate(over.switches if over else []):
            if not 0 <= s.ordinal < NVL72_SWITCHES_PER_TRAY:
                raise ctx.error(
                    f"{path}.switchTrays[{tray}].switches[{si}]", "switch ordinal out of range"
                )
            if s.ordinal in sw_over:
                raise ctx.error(
                    f"{path}.switchTrays[{tray}].switches[{si}]", "duplicate switch override"
                )
            sw_over[s.ordinal] = s
        for sw in range(NVL72_SWITCHES_PER_TRAY):
            key = ids.nvl72_switch_key(stem, tray, sw)
            o = sw_over.get(sw)
            name = (o.name if o and o.name else None) or f"{rack.name}-nvsw-{tray}-{sw}"
            serial = (o.serial if o and o.serial else None) or ids.device_serial(ctx.seed, key)
            claims.claim("hostname", name, f"{path}.switchTrays[{tray}].switches[{sw}].name")
            claims.claim("serial", serial, f"{path}.switchTrays[{tray}].switches[{sw}].serial")
            parts.switches.append(
                NvSwitchRecord(
                    len(parts.switches),
                    key,
                    name,
                    serial,
                    len(parts.domains),
                    tray,
                    sw,
                    NVL72_PORTS,
                )
            )
    members = {gpu_keys[d.gpu_start + s]: d.gpu_start + s for d in trays for s in range(4)}
    members = dict(sorted(members.items(), key=lambda kv: kv[1]))
    partitions = _partitions(ctx, path, block.partitions if block else [], stem, members, parts)
    switch_of = {(s.tray, s.ordinal): s.index for s in parts.switches[first_switch:]}
    complete = False
    if block:
        complete = _nvl72_maps(
            ctx, path, block, stem, members, switch_of, trays, rack, partitions, parts
        )
    parts.domains.append(
        DomainRecord(
            index=len(parts.domains),
            key=ids.domain_key(stem),
            stem=stem,
            name=domain,
            kind="nvl72",
            rack=rack_index,
            node=-1,
            gpus=tuple(members.values()),
            partitions=partitions,
            switches=tuple(range(first_switch, len(parts.switches))),
            switch_trays=tuple(tray_keys),
            correlated=bool(block and block.correlated),
            links_per_gpu=(block.links_per_gpu or 0) if block else 0,
            complete_map=complete,
            entity_keys=tuple(sorted(m.key for m in block.entity_mappings)) if block else (),
        )
    )
    for d in trays:
        d.domain = parts.domains[-1].index


def _nvl72_maps(
    ctx: BuildContext,
    path: str,
    block: Nvl72NvLink,
    stem: str,
    members: dict[str, int],
    switch_of: dict[tuple[int, int], int],
    trays: list[NodeDraft],
    rack: Rack,
    partitions: tuple[PartitionRecord, ...],
    parts: NvLinkParts,
) -> bool:
    """Port vendor ids, sourced links and entity mappings of an NVL72 domain (§1.8, §1.10.3)."""
    mapped: dict[tuple[int, int, int], str] = {}
    vendor_ids: set[tuple[int, int, str]] = set()
    for mi, m in enumerate(block.port_mappings):
        mpath = f"{path}.portMappings[{mi}]"
        if (m.tray, m.switch) not in switch_of or not 0 <= m.port < NVL72_PORTS:
            raise ctx.error(mpath, "port outside domain")
        if (m.tray, m.switch, m.port) in mapped or not m.vendor_id:
            raise ctx.error(mpath, "invalid/duplicate sourced port mapping")
        if (m.tray, m.switch, m.vendor_id) in vendor_ids:
            raise ctx.error(mpath, "duplicate vendor ID")
        mapped[(m.tray, m.switch, m.port)] = m.vendor_id
        vendor_ids.add((m.tray, m.switch, m.vendor_id))
    seen_links: set[tuple[int, int]] = set()
    seen_ports: set[tuple[int, int, int]] = set()
    edges: list[tuple[int, int, int, int]] = []
    for li, link in enumerate(block.links):
        lpath = f"{path}.links[{li}]"
        gpu = members.get(link.gpu)
        port = (link.tray, link.switch, link.port)
        limit = block.links_per_gpu
        if (
            gpu is None
            or link.gpu_link_index < 0
            or (limit is not None and link.gpu_link_index >= limit)
            or port not in mapped
            or (gpu, link.gpu_link_index) in seen_links
            or port in seen_ports
        ):
            raise ctx.error(lpath, "invalid/duplicate sourced endpoint")
        seen_links.add((gpu, link.gpu_link_index))
        seen_ports.add(port)
        edges.append((gpu, link.gpu_link_index, switch_of[(link.tray, link.switch)], link.port))
    if edges:
        arr = np.array(sorted(edges), dtype=np.int32)
        parts.edges.append((arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3]))
    if block.entity_mappings:
        allowed = {ids.domain_key(stem), rack.key, *members, *(p.key for p in partitions)}
        allowed.update(parts.switches[i].key for i in switch_of.values())
        for d in trays:
            allowed.update(
                {d.key, d.tray_key, ids.cpu_key(d.hostname, 0), ids.cpu_key(d.hostname, 1)}
            )
        _check_entities(
            ctx,
            path,
            block.entity_mappings,
            allowed,
            "entity outside domain/rack membership",
            False,  # §1.8 asks only for unique keys on NVL72 racks
        )
    per_gpu = block.links_per_gpu or 0
    complete = (
        per_gpu > 0
        and len(mapped) == len(switch_of) * NVL72_PORTS
        and all((g, k) in seen_links for g in members.values() for k in range(per_gpu))
    )
    if block.correlated:
        if not complete:
            raise ctx.error(
                path, "NVLink correlation requires complete sourced endpoint/vendor map"
            )
        if len(edges) != len(members) * per_gpu:
            raise ctx.error(path, "NVLink correlation map has extra edges")
    return complete and len(edges) == len(members) * per_gpu
