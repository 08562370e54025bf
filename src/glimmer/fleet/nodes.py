"""Nodes of every pool: hostnames, addresses, BMCs, trays, NIC requests, overrides (§1.7, §2.2)."""

from __future__ import annotations

from collections.abc import Mapping

from glimmer.api.fleet import NodeOverride, Pool, PoolNic, Rack, StorageCluster
from glimmer.api.fleet_parts import AddressBlock, is_name
from glimmer.fleet import identity as ids
from glimmer.fleet.context import BuildContext, Claims
from glimmer.fleet.drafts import NodeDraft
from glimmer.fleet.network import Network, NicRequest
from glimmer.fleet.placement import PoolPlacement
from glimmer.fleet.records import NicRecord, NodeRecord

_IP_RANGE = "network/broadcast/out-of-range IP assignment"


def _overrides(ctx: BuildContext, pos: int, pool: Pool) -> dict[int, NodeOverride]:
    out: dict[int, NodeOverride] = {}
    nic_names = {n.name for n in pool.nics}
    for oi, o in enumerate(pool.nodes):
        path = f"spec.pools[{pos}].nodes[{oi}]"
        if not 0 <= o.ordinal < pool.node_count:
            raise ctx.error(f"{path}.ordinal", "node override out of range")
        if o.ordinal in out:
            raise ctx.error(f"{path}.ordinal", "duplicate override ordinal")
        out[o.ordinal] = o
        checks = (
            ("nicAddresses", [a.nic for a in o.nic_addresses], "NIC address override"),
            ("attachments", [a.nic for a in o.attachments], "NIC attachment"),
        )
        for field, names, label in checks:
            seen: set[str] = set()
            for k, nic in enumerate(names):
                if nic in seen:
                    raise ctx.error(f"{path}.{field}[{k}]", f"duplicate {label}")
                if nic not in nic_names:
                    raise ctx.error(
                        f"{path}.{field}[{k}]", f"unknown {label.split(' override')[0]} override"
                    )
                seen.add(nic)
    return out


def _address(ctx: BuildContext, block: AddressBlock | None, ordinal: int, path: str) -> str:
    if block is None:
        return ""
    ip = block.address(ordinal)
    if ip is None:
        raise ctx.error(path, _IP_RANGE)
    return ip


def node_drafts(
    ctx: BuildContext,
    claims: Claims,
    net: Network,
    pools: list[tuple[int, Pool]],
    racks: list[Rack],
    placements: Mapping[str, PoolPlacement],
    storage: Mapping[str, StorageCluster],
) -> list[NodeDraft]:
    """Every node of every pool, sorted by key, with ``index`` and ``gpu_start`` assigned."""
    drafts: list[NodeDraft] = []
    for pos, pool in pools:
        overrides = _overrides(ctx, pos, pool)
        plan = net.pool_nic_plan(pos, pool)
        nic_decl = {n.name: n for n in pool.nics}
        # Where each NIC is declared, for its requests' errors: the same for every node of the
        # pool, so made once here rather than as two new strings per NIC of every node.
        nic_paths = {n.name: f"spec.pools[{pos}].nics[{i}]" for i, n in enumerate(pool.nics)}
        ip_paths = {name: f"{path}.ips" for name, path in nic_paths.items()}
        where = placements[pool.name]
        binding = pool.storage
        if binding is not None:
            cluster = storage.get(binding.cluster)
            nic = nic_decl.get(binding.nic)
            if cluster is None or nic is None or nic.fabric != cluster.fabric or not binding.role:
                raise ctx.error(
                    f"spec.pools[{pos}].storage",
                    "storage NIC must have a frontend IP and matching fabric",
                )
        for ordinal in range(pool.node_count):
            o = overrides.get(ordinal)
            host = (o.hostname if o else None) or ids.hostname(pool.hostname_prefix, ordinal)
            path = f"spec.pools[{pos}]" + (f".nodes[{_position(pool.nodes, o)}]" if o else "")
            if not is_name(host):
                raise ctx.error(f"{path}.hostnamePrefix", f"invalid generated hostname {host!r}")
            claims.claim("hostname", host, f"{path}.node[{ordinal}].hostname")
            ri = int(where.rack[ordinal])
            d = NodeDraft(
                pos,
                pool,
                ordinal,
                host,
                ri,
                racks[ri].site,
                racks[ri].name,
                int(where.slot[ordinal]),
                int(where.height[ordinal]),
                o,
            )
            d.ip = (o.ip if o and o.ip else None) or _address(
                ctx, pool.node_ips, ordinal, f"spec.pools[{pos}].nodeIps"
            )
            if pool.shape == "nvl72":
                d.tray_key = ids.compute_tray_key(d.site, d.rack_name, d.slot)
                d.tray_id = (o.tray_id if o and o.tray_id else "") or ids.tray_id(
                    ctx.seed, d.tray_key
                )
            _nic_requests(ctx, net, d, plan, nic_decl, (nic_paths, ip_paths))
            if binding is not None and not _nic_ip(d, binding.nic, nic_decl):
                raise ctx.error(
                    f"spec.pools[{pos}].storage",
                    "storage NIC must have a frontend IP and matching fabric",
                )
            drafts.append(d)
    drafts.sort(key=lambda d: d.key)
    start = 0
    for i, d in enumerate(drafts):
        d.index, d.gpu_start = i, start
        start += d.pool.gpus_per_node
    return drafts


def _nic_requests(
    ctx: BuildContext,
    net: Network,
    d: NodeDraft,
    plan: list[tuple[str, str, str, int, str]],
    nic_decl: Mapping[str, PoolNic],
    paths: tuple[Mapping[str, str], Mapping[str, str]],
) -> None:
    o = d.override
    nic_paths, ip_paths = paths
    addresses = {a.nic: a.ip for a in o.nic_addresses} if o else {}
    attach = {a.nic: a for a in o.attachments} if o else {}
    for name, fabric, role, rail, switch in plan:
        decl = nic_decl[name]
        path = nic_paths[name]
        ip = addresses.get(name) or _address(ctx, decl.ips, d.ordinal, ip_paths[name])
        port = ""
        if name in attach:
            a = attach[name]
            switch = net.check_switch(fabric, a.switch, role, rail, d.pool.scalable_unit, path)
            port = a.port
        d.nic_names.append(name)
        net.request(
            NicRequest(
                d.key, d.hostname, name, fabric, role, rail, switch, port, decl.speed_gbps, ip, path
            )
        )


def _nic_ip(d: NodeDraft, nic: str, nic_decl: Mapping[str, PoolNic]) -> bool:
    decl = nic_decl[nic]
    o = d.override
    if o and any(a.nic == nic for a in o.nic_addresses):
        return True
    return decl.ips is not None


def node_records(
    ctx: BuildContext,
    claims: Claims,
    drafts: list[NodeDraft],
    nics: Mapping[str, list[NicRecord]],
) -> tuple[NodeRecord, ...]:
    """Freeze the drafts, deriving serials and BMCs, and claim every identity once."""
    seed = ctx.seed
    out: list[NodeRecord] = []
    for d in drafts:
        pool, o = d.pool, d.override
        path = d.path
        bmc_dev = o.bmc if o else None
        bmc_name = bmc_dev.name if bmc_dev else f"{d.hostname}{pool.bmc.hostname_suffix}"
        bmc_ip = (
            (bmc_dev.management_ip or "")
            if bmc_dev
            else _address(ctx, pool.bmc.management_ips, d.ordinal, f"{path}.bmc.managementIps")
        )
        bmc_key = ids.device_key(bmc_name)
        bmc_serial = (bmc_dev.serial if bmc_dev else "") or ids.device_serial(seed, bmc_key)
        serial = (o.serial if o else "") or ids.node_serial(seed, pool.name, d.ordinal)
        node_path = f"{path}.node[{d.ordinal}]"
        claims.claim("hostname", bmc_name, f"{node_path}.bmc")
        claims.claim("IP", d.ip, f"{node_path}.ip")
        claims.claim("IP", bmc_ip, f"{node_path}.bmc.ip")
        claims.claim("serial", serial, f"{node_path}.serial")
        claims.claim("serial", bmc_serial, f"{node_path}.bmc.serial")
        claims.claim("tray ID", d.tray_id, f"{node_path}.trayId")
        own = tuple(nics.get(d.key, []))
        for nic in own:
            claims.claim("IP", nic.ip, f"{node_path}.nics.{nic.name}.ip")
        storage = pool.storage
        out.append(
            NodeRecord(
                index=d.index,
                key=d.key,
                hostname=d.hostname,
                pool=pool.name,
                ordinal=d.ordinal,
                shape=pool.shape,
                model=pool.gpu_model,
                rack=d.rack,
                slot=d.slot,
                height_u=d.height,
                tray_key=d.tray_key,
                tray_id=d.tray_id,
                uid=ids.node_uid_of(seed, pool.name, d.ordinal),
                serial=serial,
                ip=d.ip,
                bmc_name=bmc_name,
                bmc_ip=bmc_ip,
                bmc_serial=bmc_serial,
                cpus=pool.hardware.cpus,
                memory_gib=pool.hardware.memory_gib,
                arch=pool.hardware.arch,
                cpu_keys=(ids.cpu_key(d.hostname, 0), ids.cpu_key(d.hostname, 1))
                if pool.shape == "nvl72"
                else (),
                gpu_start=d.gpu_start,
                gpu_count=pool.gpus_per_node,
                nics=own,
                storage_client=ids.client_key(storage.cluster, d.hostname) if storage else "",
                storage_cluster=ids.storage_key(storage.cluster) if storage else "",
                kubernetes_cluster=pool.kubernetes_cluster,
            )
        )
    return tuple(out)


def _position(items: list[NodeOverride], item: NodeOverride) -> int:
    # By identity: pydantic equality compares every field, far too slow for a hot loop.
    return next(i for i, x in enumerate(items) if x is item)
