"""Fabrics, their switches and ports, and which port every NIC plugs into (§1.5–§1.7.3).

Port assignment is deterministic and independent of declaration order: requests are sorted by
``<owner key>/<nic>``; explicit ports are taken first, then each remaining NIC gets the first
free port of its switch, in the switch's declared port order, that is fast enough.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from glimmer.api.fleet import Fabric, FabricLink, Pool, StorageCluster
from glimmer.api.fleet_parts import Device
from glimmer.fleet import identity as ids
from glimmer.fleet.context import BuildContext, Claims
from glimmer.fleet.records import FabricRecord, FabricSwitchRecord, NicRecord

_SWITCH_KINDS = frozenset({"leaf", "spine", "management_switch"})


@dataclass
class _Switch:
    record: FabricSwitchRecord
    role: str
    used: set[str] = field(default_factory=set)
    cursor: int = 0  # every port before this one is used
    names: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self.names = frozenset(p for p, _ in self.record.ports)


@dataclass(slots=True)
class NicRequest:
    """One NIC waiting for a port: owner (node or device key) and what it asked for."""

    owner: str
    owner_name: str  # hostname or device name, for the NIC key
    name: str
    fabric: str
    role: str
    rail: int
    switch: str  # switch key
    port: str  # explicit port name or ""
    speed: float
    ip: str
    path: str


class Network:
    """The fabrics of a fleet and the NIC → port assignment."""

    def __init__(self, ctx: BuildContext, claims: Claims) -> None:
        self.ctx, self.claims = ctx, claims
        self.fabrics: dict[str, Fabric] = {}
        self.switches: dict[str, _Switch] = {}
        self.records: list[FabricRecord] = []
        self.requests: list[NicRequest] = []
        self._leaves: dict[tuple[str, int, str], list[str]] = {}

    # -- fabrics --------------------------------------------------------------------------------

    def add_fabrics(self, fabrics: list[tuple[int, Fabric]]) -> None:
        for fi, fabric in sorted(fabrics, key=lambda p: p[1].name):
            path = f"spec.fabrics[{fi}]"
            self.claims.claim("fabric", fabric.name, f"{path}.name")
            self.fabrics[fabric.name] = fabric
            keys = []
            for di, dev in sorted(enumerate(fabric.devices), key=lambda p: p[1].name):
                dpath = f"{path}.devices[{di}]"
                if dev.kind not in _SWITCH_KINDS:
                    raise self.ctx.error(f"{dpath}.kind", "fabric device must be a switch")
                self._claim_device(dev, ids.switch_key(fabric.name, dev.name), dpath)
                rec = FabricSwitchRecord(
                    key=ids.switch_key(fabric.name, dev.name),
                    fabric=fabric.name,
                    name=dev.name,
                    kind=dev.kind,
                    rail=-1 if dev.rail is None else dev.rail,
                    scalable_unit=dev.scalable_unit,
                    ports=tuple(dev.port_list()),
                )
                self.switches[rec.key] = _Switch(rec, fabric.role)
                keys.append(rec.key)
                if dev.kind == "leaf" and dev.rail is not None:
                    su_key = (fabric.name, dev.rail, dev.scalable_unit)
                    self._leaves.setdefault(su_key, []).append(rec.key)
            links = [
                self._cable(fabric, f"{path}.links[{li}]", link)
                for li, link in enumerate(fabric.links)
            ]
            self.records.append(
                FabricRecord(
                    key=ids.fabric_key(fabric.name),
                    name=fabric.name,
                    site=fabric.site,
                    role=fabric.role,
                    switches=tuple(sorted(keys)),
                    links=tuple(sorted(links)),
                )
            )

    def _cable(self, fabric: Fabric, path: str, link: FabricLink) -> tuple[str, str]:
        reason = "invalid link or endpoint attached twice"
        ends: list[tuple[_Switch, str]] = []
        for end, dev, port in (
            ("a", link.a_device, link.a_port),
            ("b", link.b_device, link.b_port),
        ):
            sw = self.switches.get(ids.switch_key(fabric.name, dev))
            if sw is None:
                why = f"device {dev!r} is not declared in fabric {fabric.name!r}"
                raise self.ctx.error(f"{path}.{end}Device", f"{reason}: {why}")
            if port not in sw.names:
                why = f"device {dev!r} has no port {port!r}"
                raise self.ctx.error(f"{path}.{end}Port", f"{reason}: {why}")
            if port in sw.used:
                why = f"port {port!r} of {dev!r} is attached twice"
                raise self.ctx.error(f"{path}.{end}Port", f"{reason}: {why}")
            ends.append((sw, port))
        if ends[0] == ends[1]:
            raise self.ctx.error(path, f"{reason}: both ends are {link.a_device}/{link.a_port}")
        for sw, port in ends:
            sw.used.add(port)
        return (
            ids.port_key(fabric.name, ends[0][0].record.name, ends[0][1]),
            ids.port_key(fabric.name, ends[1][0].record.name, ends[1][1]),
        )

    def _claim_device(self, dev: Device, key: str, path: str) -> str:
        serial = dev.serial or ids.device_serial(self.ctx.seed, key)
        self.claims.claim("hostname", dev.name, f"{path}.name")
        self.claims.claim("serial", serial, f"{path}.serial")
        self.claims.claim("IP", dev.management_ip or "", f"{path}.managementIp")
        return serial

    # -- NIC requests ---------------------------------------------------------------------------

    def backend_leaf(self, fabric: str, rail: int, su: str, path: str) -> str:
        """The unique leaf of ``fabric`` serving ``rail`` in scalable unit ``su``."""
        leaves = self._leaves.get((fabric, rail, su), [])
        if len(leaves) > 1:
            raise self.ctx.error(path, "ambiguous backend leaf")
        if not leaves:
            raise self.ctx.error(
                path,
                f"unknown NIC leaf: no leaf of fabric {fabric!r} serves rail {rail} in scalable "
                f"unit {su!r}",
            )
        return leaves[0]

    def check_switch(
        self, fabric: str, switch: str, role: str, rail: int, su: str, path: str
    ) -> str:
        key = ids.switch_key(fabric, switch)
        sw = self.switches.get(key)
        if sw is None:
            raise self.ctx.error(
                f"{path}.switch",
                f"unknown NIC leaf: switch {switch!r} is not declared in fabric {fabric!r}",
            )
        if role == "backend" and sw.record.kind != "leaf":
            raise self.ctx.error(
                f"{path}.switch", f"unknown NIC leaf: switch {switch!r} is no leaf"
            )
        if role == "backend" and (sw.record.rail != rail or sw.record.scalable_unit != su):
            raise self.ctx.error(path, "rail mismatch")
        return key

    def pool_nic_plan(self, pi: int, pool: Pool) -> list[tuple[str, str, str, int, str]]:
        """(nic, fabric, role, rail, default switch key or "") per NIC of a pool, sorted by name."""
        out: list[tuple[str, str, str, int, str]] = []
        seen: set[str] = set()
        for ni, nic in sorted(enumerate(pool.nics), key=lambda p: p[1].name):
            path = f"spec.pools[{pi}].nics[{ni}]"
            fabric = self.fabrics.get(nic.fabric)
            if fabric is None:
                raise self.ctx.error(
                    f"{path}.fabric",
                    f"invalid/duplicate NIC: fabric {nic.fabric!r} is not declared",
                )
            if nic.name in seen:
                raise self.ctx.error(f"{path}.name", f"invalid/duplicate NIC: {nic.name!r} twice")
            seen.add(nic.name)
            switch = ""
            rail = -1
            if fabric.role == "backend":
                if nic.rail is None or nic.rail < 0 or not pool.scalable_unit:
                    raise self.ctx.error(path, "backend NIC requires rail and scalable unit")
                rail = nic.rail
                if nic.switch:
                    switch = self.check_switch(
                        nic.fabric, nic.switch, "backend", rail, pool.scalable_unit, path
                    )
                else:
                    switch = self.backend_leaf(nic.fabric, rail, pool.scalable_unit, path)
            else:
                if nic.rail is not None:
                    rail = nic.rail
                if not nic.switch:
                    raise self.ctx.error(path, "frontend NIC requires switch")
                switch = self.check_switch(nic.fabric, nic.switch, "frontend", rail, "", path)
            out.append((nic.name, nic.fabric, fabric.role, rail, switch))
        return out

    def request(self, req: NicRequest) -> None:
        self.requests.append(req)

    def device_nics(self, dev: Device, owner_key: str, path: str) -> None:
        """Queue the NICs of a facility or storage device for attachment."""
        for ni, nic in enumerate(dev.nics):
            npath = f"{path}.nics[{ni}]"
            fabric = self.fabrics.get(nic.fabric)
            key = ids.switch_key(nic.fabric, nic.switch)
            sw = self.switches.get(key)
            if fabric is None:
                raise self.ctx.error(
                    f"{npath}.fabric",
                    f"unknown device NIC fabric/switch: fabric {nic.fabric!r} is not declared",
                )
            if sw is None:
                raise self.ctx.error(
                    f"{npath}.switch",
                    f"unknown device NIC fabric/switch: switch {nic.switch!r} is not declared "
                    f"in fabric {nic.fabric!r}",
                )
            rail = -1 if dev.rail is None else dev.rail
            if fabric.role == "backend" and (
                sw.record.kind != "leaf"
                or sw.record.rail != rail
                or sw.record.scalable_unit != dev.scalable_unit
            ):
                raise self.ctx.error(npath, "device NIC backend rail mismatch")
            self.claims.claim("NIC", f"{dev.name}/{nic.name}", f"{npath}.name")
            self.claims.claim("IP", nic.ip or "", f"{npath}.ip")
            self.requests.append(
                NicRequest(
                    owner_key,
                    dev.name,
                    nic.name,
                    nic.fabric,
                    fabric.role,
                    rail,
                    key,
                    nic.port,
                    nic.speed_gbps,
                    nic.ip or "",
                    npath,
                )
            )

    # -- attachment -----------------------------------------------------------------------------

    def attach(self) -> dict[str, list[NicRecord]]:
        """Assign ports to every queued NIC; NIC records grouped by owner key."""
        reqs = sorted(self.requests, key=lambda r: f"{r.owner}/{r.name}")
        chosen: dict[int, str] = {}
        for i, r in enumerate(reqs):  # pass 1: explicit ports
            if r.port:
                sw = self.switches.get(r.switch)
                if (
                    sw is None
                    or r.port in sw.used
                    or not any(p == r.port and s >= r.speed for p, s in sw.record.ports)
                ):
                    raise self.ctx.error(r.path, "no free port or endpoint attached twice")
                sw.used.add(r.port)
                chosen[i] = r.port
        for i, r in enumerate(reqs):  # pass 2: first free, fast-enough port
            if r.port or not r.switch:
                continue
            chosen[i] = self._first_free(self.switches[r.switch], r)
        out: dict[str, list[NicRecord]] = {}
        for i, r in enumerate(reqs):
            sw_name = r.switch.partition("/")[2]
            port = chosen.get(i, "")
            out.setdefault(r.owner, []).append(
                NicRecord(
                    key=ids.nic_key(r.owner_name, r.name),
                    owner=r.owner,
                    name=r.name,
                    fabric=r.fabric,
                    role=r.role,
                    rail=r.rail,
                    switch_key=r.switch,
                    port_key=ids.port_key(r.fabric, sw_name, port) if port else "",
                    speed_gbps=r.speed,
                    ip=r.ip,
                )
            )
        return out

    def _first_free(self, sw: _Switch, r: NicRequest) -> str:
        ports = sw.record.ports
        while sw.cursor < len(ports) and ports[sw.cursor][0] in sw.used:
            sw.cursor += 1
        for name, speed in ports[sw.cursor :]:
            if name not in sw.used and speed >= r.speed:
                sw.used.add(name)
                return name
        raise self.ctx.error(r.path, "no free port or endpoint attached twice")

    def fabric_switch_records(self) -> tuple[FabricSwitchRecord, ...]:
        return tuple(sorted((s.record for s in self.switches.values()), key=lambda s: s.key))


def check_storage(
    ctx: BuildContext, net: Network, storage: list[tuple[int, StorageCluster]]
) -> dict[str, StorageCluster]:
    """Storage clusters sit on a frontend fabric and reach it through addressed NICs."""
    out: dict[str, StorageCluster] = {}
    for si, st in sorted(storage, key=lambda p: p[1].name):
        path = f"spec.storageClusters[{si}]"
        ctx_claims = net.claims
        ctx_claims.claim("storage", st.name, f"{path}.name")
        fabric = net.fabrics.get(st.fabric)
        if fabric is None:
            why = f"fabric {st.fabric!r} is not declared"
            raise ctx.error(f"{path}.fabric", f"storage requires frontend fabric: {why}")
        if fabric.role != "frontend":
            why = f"fabric {st.fabric!r} is a {fabric.role} fabric"
            raise ctx.error(f"{path}.fabric", f"storage requires frontend fabric: {why}")
        for di, dev in enumerate(st.devices):
            dpath = f"{path}.devices[{di}]"
            if any(n.fabric != st.fabric or not n.ip for n in dev.nics):
                raise ctx.error(dpath, "storage NIC requires frontend IP and matching fabric")
            net._claim_device(dev, ids.device_key(dev.name), dpath)
            net.device_nics(dev, ids.device_key(dev.name), dpath)
        out[st.name] = st
    return out
