"""Declaration -> topology: the build sequence of §1.13, with every cross-object rule of §1.

Order of the declaration never matters: racks are taken sorted by key, pools, fabrics and
schedulers by name, nodes by key. Two builds of one declaration are equal field for field.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from glimmer.api.fleet import Fleet, Pool, Rack
from glimmer.fleet import identity as ids
from glimmer.fleet import skus
from glimmer.fleet.context import BuildContext, Claims
from glimmer.fleet.drafts import NodeDraft
from glimmer.fleet.gpus import build_gpus
from glimmer.fleet.indexing import index_topology
from glimmer.fleet.network import Network, check_storage
from glimmer.fleet.nodes import node_drafts, node_records
from glimmer.fleet.nvlink import NvLinkParts, build_hgx, build_nvl72
from glimmer.fleet.placement import place
from glimmer.fleet.records import DeviceRecord, NicRecord, RackRecord
from glimmer.fleet.scheduling import check_schedulers
from glimmer.fleet.topology import IntArray, Topology


def build(
    fleet: Fleet,
    source: str | None = None,
    lines: Mapping[str, int] | None = None,
    document: int | None = None,
) -> Topology:
    """Build the topology of ``fleet``; :class:`InputError` (file, field path) on a broken rule."""
    # A build allocates hundreds of thousands of small acyclic objects; the cyclic collector
    # would walk them again and again (a third of the time at 100,000 GPUs) and free nothing.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _build(fleet, source, lines, document)
    finally:
        if enabled:
            gc.enable()


def _build(
    fleet: Fleet,
    source: str | None,
    lines: Mapping[str, int] | None,
    document: int | None,
) -> Topology:
    ctx = BuildContext(fleet, source, lines or {}, document)
    claims = Claims(ctx)
    spec = fleet.spec
    _check_sites(ctx)
    racks = sorted(enumerate(spec.racks), key=lambda p: p[1].key)
    rack_list = [r for _, r in racks]
    rack_index: dict[str, int] = {}
    for pos, rack in racks:
        claims.claim("rack", rack.key, f"spec.racks[{pos}]")
        rack_index[rack.key] = len(rack_index)
    net = Network(ctx, claims)
    net.add_fabrics(list(enumerate(spec.fabrics)))
    devices = _facility_devices(ctx, claims, net, racks)
    storage = check_storage(ctx, net, list(enumerate(spec.storage_clusters)))
    pools = sorted(enumerate(spec.pools), key=lambda p: p[1].name)
    for pos, pool in pools:
        claims.claim("pool", pool.name, f"spec.pools[{pos}].name")
        _check_model(ctx, pos, pool)
    placements = place(ctx, pools, rack_list, rack_index)
    drafts = node_drafts(ctx, claims, net, pools, rack_list, placements, storage)
    gpus = build_gpus(ctx, claims, drafts)
    parts = NvLinkParts()
    build_hgx(
        ctx, claims, [d for d in drafts if d.pool.shape == "hgx"], gpus.keys, gpus.modules, parts
    )
    by_rack: dict[int, list[NodeDraft]] = {}
    for d in drafts:
        by_rack.setdefault(d.rack, []).append(d)
    for ri, (pos, rack) in enumerate(racks):
        if rack.shape == "nvl72":
            trays = sorted(by_rack.get(ri, []), key=lambda d: d.slot)
            build_nvl72(ctx, claims, pos, ri, rack, trays, gpus.keys, parts)
    nics = net.attach()
    nodes = node_records(ctx, claims, drafts, nics)
    pool_names = tuple(p.name for _, p in pools)
    # (pool, ordinal, slot) -> GPU index, for the schedulers' workers: a tuple a GPU, so made
    # only for a fleet that declares a scheduler.
    gpu_of = (
        {
            (d.pool.name, d.ordinal, s): d.gpu_start + s
            for d in drafts
            for s in range(d.pool.gpus_per_node)
        }
        if spec.schedulers
        else {}
    )
    workload_gpus = check_schedulers(ctx, {p.name: p for _, p in pools}, gpu_of)
    models = tuple(s for s in skus.all_skus())
    model_no = {s.key: i for i, s in enumerate(models)}
    counts = np.array([d.pool.gpus_per_node for d in drafts], dtype=np.int64)
    gpu_node = gpus.node
    domain_of = np.array([d.domain for d in drafts], dtype=np.int32)
    gpu_partition = np.full(len(gpus.keys), -1, dtype=np.int32)
    for pi, part in enumerate(parts.partitions):
        gpu_partition[list(part.gpus)] = pi
    gpu_module = np.full(len(gpus.keys), -1, dtype=np.int16)
    for first, module_ids in parts.gpu_module.items():
        gpu_module[first : first + len(module_ids)] = module_ids
    edges = _edges(parts)
    topo = Topology(
        name=fleet.metadata.name,
        seed=fleet.seed,
        source=source,
        fleet=fleet,
        models=models,
        pools=pool_names,
        racks=tuple(_rack_record(i, r, devices) for i, (_, r) in enumerate(racks)),
        nodes=nodes,
        domains=tuple(parts.domains),
        partitions=tuple(parts.partitions),
        nvswitches=tuple(parts.switches),
        fabrics=tuple(sorted(net.records, key=lambda f: f.key)),
        fabric_switches=net.fabric_switch_records(),
        devices=tuple(_with_nics(d, nics) for d in sorted(devices, key=lambda d: d.key)),
        gpu_keys=gpus.keys,
        gpu_uuids=gpus.uuids,
        gpu_board_serials=gpus.board_serials,
        gpu_pci_bus_ids=gpus.pci_bus_ids,
        gpu_node=gpu_node,
        gpu_rack=np.repeat(np.array([d.rack for d in drafts], dtype=np.int32), counts),
        gpu_model=np.repeat(
            np.array([model_no[d.pool.gpu_model] for d in drafts], dtype=np.int16), counts
        ),
        gpu_pool=np.repeat(
            np.array([pool_names.index(d.pool.name) for d in drafts], dtype=np.int16), counts
        ),
        gpu_slot=gpus.slot,
        gpu_module=gpu_module,
        gpu_domain=domain_of[gpu_node] if len(drafts) else np.zeros(0, dtype=np.int32),
        gpu_partition=gpu_partition,
        gpu_usable_memory=gpus.usable_memory,
        edge_gpu=edges[0],
        edge_link=edges[1].astype(np.int16),
        edge_switch=edges[2],
        edge_port=edges[3].astype(np.int16),
        index={},
        workload_gpus=workload_gpus,
    )
    index_topology(ctx, topo)
    return topo


def _check_sites(ctx: BuildContext) -> None:
    spec = ctx.fleet.spec
    names: set[str] = set()
    for i, site in enumerate(spec.sites):
        if site.name in names:
            raise ctx.error(f"spec.sites[{i}].name", f"duplicate site {site.name}")
        names.add(site.name)
    if not names:
        return  # sites are optional; when declared, every rack and fabric must name one of them
    sited = [("racks", i, r.site) for i, r in enumerate(spec.racks)]
    sited += [("fabrics", i, f.site) for i, f in enumerate(spec.fabrics)]
    sited += [("storageClusters", i, s.site) for i, s in enumerate(spec.storage_clusters)]
    for kind, i, site_name in sited:
        if site_name not in names:
            raise ctx.error(f"spec.{kind}[{i}].site", f"unknown site {site_name!r}")


def _check_model(ctx: BuildContext, pos: int, pool: Pool) -> None:
    sku = skus.lookup(pool.gpu_model)
    path = f"spec.pools[{pos}]"
    if sku is None:
        known = ", ".join(s.key for s in skus.all_skus())
        raise ctx.error(f"{path}.gpuModel", f"unknown gpuModel {pool.gpu_model!r} (known: {known})")
    if pool.shape not in sku.shapes:
        raise ctx.error(
            f"{path}.gpuModel",
            f'gpuModel "{pool.gpu_model}" incompatible with shape "{pool.shape}"',
        )
    limit = pool.operating.power_limit_w
    if limit is not None and (sku.max_power_w is None or limit > sku.max_power_w):
        raise ctx.error(
            f"{path}.operating.powerLimitW", "power limit exceeds sourced maximum or invalid"
        )


def _facility_devices(
    ctx: BuildContext, claims: Claims, net: Network, racks: list[tuple[int, Rack]]
) -> list[DeviceRecord]:
    out: list[DeviceRecord] = []
    for ri, (pos, rack) in enumerate(racks):
        for di, dev in enumerate(rack.facility_devices):
            path = f"spec.racks[{pos}].facilityDevices[{di}]"
            key = ids.device_key(dev.name)
            serial = net._claim_device(dev, key, path)
            net.device_nics(dev, key, path)
            out.append(
                DeviceRecord(
                    key,
                    dev.name,
                    dev.kind,
                    serial,
                    dev.management_ip or "",
                    ri,
                    dev.static_power_w or 0.0,
                    (),
                )
            )
    return out


def _with_nics(dev: DeviceRecord, nics: Mapping[str, list[NicRecord]]) -> DeviceRecord:
    own = tuple(nics.get(dev.key, []))
    return replace(dev, nics=own) if own else dev


def _rack_record(index: int, rack: Rack, devices: list[DeviceRecord]) -> RackRecord:
    mine = [d for d in devices if d.rack == index]
    p = rack.physics
    return RackRecord(
        index=index,
        key=rack.key,
        site=rack.site,
        name=rack.name,
        shape=rack.shape,
        cooling=rack.cooling,
        height_u=rack.height,
        fixed_overhead_w=p.fixed_overhead_w,
        liquid_heat_fraction=p.liquid_heat_fraction,
        supply_temp_c=p.supply_temp_c,
        flow_lpm=p.flow_lpm,
        fluid_density_kg_per_l=p.fluid_density_kg_per_l,
        fluid_specific_heat_j_per_kg_c=p.fluid_specific_heat_j_per_kg_c,
        device_keys=tuple(sorted(d.key for d in mine)),
        static_power_w=sum(d.static_power_w for d in mine),
    )


def _edges(parts: NvLinkParts) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    if not parts.edges:
        empty = np.zeros(0, dtype=np.int32)
        return empty, empty, empty, empty
    if len(parts.edges) == 1:
        cols = [np.asarray(c, dtype=np.int32) for c in parts.edges[0]]  # no copy to concatenate
    else:
        cols = [np.concatenate([e[i] for e in parts.edges], dtype=np.int32) for i in range(4)]
    # By GPU, then link; built in place: 1.8M edges at 100k GPUs, past the caches, so every
    # temporary array of that length costs more per edge than it does in a small fleet.
    key = cols[0].astype(np.int64)
    key *= 256
    key += cols[1]
    if bool(np.all(key[1:] >= key[:-1])):
        return cols[0], cols[1], cols[2], cols[3]  # HGX edges are born in this order
    order = np.argsort(key, kind="stable")
    return cols[0][order], cols[1][order], cols[2][order], cols[3][order]


__all__ = ["NodeDraft", "build"]
