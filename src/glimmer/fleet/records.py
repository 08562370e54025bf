"""The built facts of a fleet, one frozen record per physical thing (nodes, racks, switches …).

Per-GPU facts are not records: they live as numpy arrays on the Topology
so a 100,000-GPU fleet costs arrays, not objects.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RackRecord:
    index: int
    key: str  # rack:<site>/<name>
    site: str
    name: str
    shape: str
    cooling: str
    height_u: int
    fixed_overhead_w: float
    liquid_heat_fraction: float
    supply_temp_c: float
    flow_lpm: float
    fluid_density_kg_per_l: float
    fluid_specific_heat_j_per_kg_c: float
    device_keys: tuple[str, ...]  # facility devices: device:<name>
    static_power_w: float  # sum of facility devices' declared static power


@dataclass(frozen=True, slots=True)
class NicRecord:
    """A NIC port of a node (or device) and where it plugs into its fabric."""

    key: str  # nic:<hostname>/<nic>
    owner: str  # node or device key
    name: str
    fabric: str
    role: str  # frontend | backend
    rail: int  # -1 when the fabric has no rails (frontend)
    switch_key: str  # switch:<fabric>/<device>
    port_key: str  # port:<fabric>/<device>/<port>
    speed_gbps: float
    ip: str  # "" when no address was assigned


@dataclass(frozen=True, slots=True)
class NodeRecord:
    index: int
    key: str  # node:<hostname>
    hostname: str
    pool: str
    ordinal: int  # pool-local ordinal
    shape: str
    model: str  # SKU key
    rack: int  # index into Topology.racks
    slot: int  # first RU (pcie/hgx, 1-based) or tray ordinal (nvl72, 0-based)
    height_u: int  # RU occupied (1 for an NVL72 tray)
    tray_key: str  # "" unless nvl72
    tray_id: str
    uid: str
    serial: str
    ip: str
    bmc_name: str
    bmc_ip: str
    bmc_serial: str
    cpus: int
    memory_gib: float
    arch: str
    cpu_keys: tuple[str, ...]  # Grace CPUs (nvl72)
    gpu_start: int  # first GPU index; the node's GPUs are gpu_start .. gpu_start+gpu_count-1
    gpu_count: int
    nics: tuple[NicRecord, ...]
    storage_client: str  # client:<storage>/<hostname> or ""
    storage_cluster: str  # storage:<name> or ""
    kubernetes_cluster: str

    @property
    def gpu_indices(self) -> range:
        return range(self.gpu_start, self.gpu_start + self.gpu_count)


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    key: str  # partition:<stem>/<name>
    name: str
    gpus: tuple[int, ...]  # GPU indices, ascending


@dataclass(frozen=True, slots=True)
class NvSwitchRecord:
    index: int
    key: str  # nvswitch:<stem>/<tray>/<sw> (nvl72) or nvswitch:<stem>/<sw> (hgx)
    name: str
    serial: str
    domain: int
    tray: int  # switch tray 0..8 (nvl72), -1 (hgx)
    ordinal: int  # switch within tray (nvl72) or physical id 0..3 (hgx)
    port_count: int  # logical ports: 72 (nvl72) or 64 (hgx)

    def port_key(self, port: int) -> str:
        return f"nvport:{self.key.removeprefix('nvswitch:')}/{port}"


@dataclass(frozen=True, slots=True)
class DomainRecord:
    """One NVLink domain: a whole NVL72 rack, or one HGX baseboard."""

    index: int
    key: str  # domain:<stem>
    stem: str
    name: str
    kind: str  # nvl72 | hgx
    rack: int
    node: int  # owning node (hgx) or -1
    gpus: tuple[int, ...]
    partitions: tuple[PartitionRecord, ...]
    switches: tuple[int, ...]  # indices into Topology.nvswitches
    switch_trays: tuple[str, ...]  # tray keys (nvl72)
    correlated: bool
    links_per_gpu: int  # 0 when unknown
    complete_map: bool  # every port sourced, every GPU link mapped (§1.10.3)
    entity_keys: tuple[str, ...]  # members with a sourced vendor entity id


@dataclass(frozen=True, slots=True)
class FabricSwitchRecord:
    key: str  # switch:<fabric>/<device>
    fabric: str
    name: str
    kind: str  # leaf | spine | management_switch
    rail: int  # -1 when unset
    scalable_unit: str
    ports: tuple[tuple[str, float], ...]  # (name, speed) in declared order


@dataclass(frozen=True, slots=True)
class FabricRecord:
    key: str  # fabric:<name>
    name: str
    site: str
    role: str
    switches: tuple[str, ...]  # switch keys, sorted
    links: tuple[tuple[str, str], ...]  # (port key, port key) of declared cables


@dataclass(frozen=True, slots=True)
class DeviceRecord:
    key: str  # device:<name>
    name: str
    kind: str
    serial: str
    management_ip: str
    rack: int  # -1 unless a facility device
    static_power_w: float
    nics: tuple[NicRecord, ...]
