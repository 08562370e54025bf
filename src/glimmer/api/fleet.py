"""The Fleet resource (``fleet.glimmer.ai/v1alpha1``, kind ``Fleet``): a declared GPU inventory.

It follows specs/fleet.md §1 (the ``gpu_compute`` block), adapted to our resource style:
``apiVersion``/``kind``/``metadata``/``spec`` and camelCase field names on the wire. The rules
that concern one object are checked here; the rules that need several objects or the built
identities (placements, references, claims) are checked by ``glimmer.fleet.build``.

``metadata.name`` is the fleet's seed: every synthetic identity derives from it (§0, §2).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, model_validator

from glimmer.api.fleet_nvlink import HgxNvLink, Nvl72NvLink
from glimmer.api.fleet_parts import API_VERSION as API_VERSION
from glimmer.api.fleet_parts import (
    AddressBlock,
    Device,
    DevicePort,
    FleetModel,
    IPv4,
    Name,
    Source,
    one_of,
)
from glimmer.api.fleet_sched import Scheduler

Shape = Literal["pcie", "hgx", "nvl72"]
SHAPES: tuple[str, ...] = ("pcie", "hgx", "nvl72")
DEFAULT_RACK_HEIGHT_U = 42


class Site(FleetModel):
    """A site (a data hall or campus) that racks and fabrics belong to."""

    name: Name
    description: str = ""


class RackPhysics(FleetModel):
    """Fixed rack power overhead and, for liquid racks, the coolant loop."""

    fixed_overhead_w: float = 0.0
    liquid_heat_fraction: float = 0.0
    supply_temp_c: float = 0.0
    flow_lpm: float = 0.0
    fluid_density_kg_per_l: float = 0.0
    fluid_specific_heat_j_per_kg_c: float = 0.0

    @model_validator(mode="after")
    def _valid(self) -> RackPhysics:
        values = (
            self.fixed_overhead_w,
            self.liquid_heat_fraction,
            self.supply_temp_c,
            self.flow_lpm,
            self.fluid_density_kg_per_l,
            self.fluid_specific_heat_j_per_kg_c,
        )
        if (
            not all(math.isfinite(v) for v in values)
            or self.fixed_overhead_w < 0
            or not 0 <= self.liquid_heat_fraction <= 1
        ):
            raise ValueError("nonfinite or invalid physics parameter")
        return self


_RACK_REASON = "invalid name or unsupported shape/cooling"


class Rack(FleetModel):
    """A rack at a site. Its key is ``rack:<site>/<name>``."""

    name: Name
    site: Name
    shape: Annotated[Shape, one_of(_RACK_REASON, *SHAPES)]
    cooling: Annotated[Literal["air", "liquid"], one_of(_RACK_REASON, "air", "liquid")]
    height_u: int = 0
    physics: RackPhysics = RackPhysics()
    facility_devices: list[Device] = Field(default_factory=list)
    nvlink: Nvl72NvLink | None = None

    @model_validator(mode="after")
    def _rack_rules(self) -> Rack:
        if self.height_u < 0:
            raise ValueError("invalid rack height")
        p = self.physics
        if (
            self.cooling == "liquid"
            and min(p.flow_lpm, p.fluid_density_kg_per_l, p.fluid_specific_heat_j_per_kg_c) <= 0
        ):
            raise ValueError("liquid fluid quantities must be positive")
        if self.cooling == "air" and p.liquid_heat_fraction != 0:
            raise ValueError("air rack has nonzero liquid heat fraction")
        if self.nvlink is not None and self.shape != "nvl72":
            raise ValueError("NVLink requires NVL72 shape")
        return self

    @property
    def key(self) -> str:
        return f"rack:{self.site}/{self.name}"

    @property
    def height(self) -> int:
        """Usable height in RU: 42 when omitted (pcie/hgx; NVL72 racks count trays instead)."""
        return self.height_u or DEFAULT_RACK_HEIGHT_U


class FabricLink(FleetModel):
    """A cable between two declared ports of one fabric (e.g. leaf uplink to spine)."""

    a_device: Name
    a_port: Name
    b_device: Name
    b_port: Name


class Fabric(FleetModel):
    """A network fabric: frontend (management, storage) or backend (GPU east-west rails)."""

    name: Name
    site: Name
    role: Annotated[
        Literal["frontend", "backend"],
        one_of("invalid fabric name/site/role", "frontend", "backend"),
    ]
    devices: list[Device] = Field(default_factory=list)
    links: list[FabricLink] = Field(default_factory=list)


class StorageCluster(FleetModel):
    """A storage system reached over a frontend fabric."""

    name: Name
    site: Name
    fabric: Name
    devices: list[Device] = Field(default_factory=list)


class Hardware(FleetModel):
    """Host CPU and memory of every node of a pool."""

    cpus: int
    memory_gib: float
    arch: Annotated[
        Literal["x86_64", "arm64"], one_of("invalid pool name/count/hardware", "x86_64", "arm64")
    ]

    @model_validator(mode="after")
    def _positive(self) -> Hardware:
        if self.cpus <= 0 or not math.isfinite(self.memory_gib) or self.memory_gib <= 0:
            raise ValueError("invalid pool name/count/hardware")
        return self


class Operating(FleetModel):
    """The operating assumptions of a pool. All but ``powerLimitW`` must be stated explicitly."""

    power_limit_w: float | None = None
    idle_power_fraction: float
    cooling_perf_loss: float
    congestion_perf_loss: float
    storage_perf_loss: float
    ambient_temp_c: float
    full_power_rise_c: float
    cooling_fault_rise_c: float
    node_base_power_w: float
    node_dynamic_per_core_w: float
    node_dynamic_per_nic_w: float
    nvlink_errors_per_second: float

    @model_validator(mode="after")
    def _valid(self) -> Operating:
        fractions = (
            self.idle_power_fraction,
            self.cooling_perf_loss,
            self.congestion_perf_loss,
            self.storage_perf_loss,
        )
        non_negative = (
            self.full_power_rise_c,
            self.cooling_fault_rise_c,
            self.node_dynamic_per_core_w,
            self.node_dynamic_per_nic_w,
            self.nvlink_errors_per_second,
        )
        if (
            not math.isfinite(self.ambient_temp_c)
            or not all(math.isfinite(v) and 0 <= v <= 1 for v in fractions)
            or not all(math.isfinite(v) and v >= 0 for v in non_negative)
            or not (math.isfinite(self.node_base_power_w) and self.node_base_power_w > 0)
        ):
            raise ValueError("nonfinite or invalid operating parameter")
        limit = self.power_limit_w
        if limit is not None and not (math.isfinite(limit) and limit > 0):
            raise ValueError("power limit exceeds sourced maximum or invalid")
        return self


class Bmc(FleetModel):
    """How each node's BMC is named and addressed."""

    hostname_suffix: str = "-bmc"
    management_ips: AddressBlock | None = None
    ports: list[DevicePort] = Field(default_factory=list)


class Placement(FleetModel):
    """Where a run of consecutive node ordinals of a pool sits in a rack."""

    rack: str
    node_start: int
    node_count: int
    slot_start: int
    node_height_u: int = 0


class PoolNic(FleetModel):
    """A NIC every node of a pool has, on a fabric; backend NICs name their rail."""

    name: Name
    fabric: Name
    rail: int | None = None
    switch: str = ""
    speed_gbps: float
    ips: AddressBlock | None = None

    @model_validator(mode="after")
    def _speed(self) -> PoolNic:
        if not math.isfinite(self.speed_gbps) or self.speed_gbps <= 0:
            raise ValueError("invalid/duplicate NIC (speed must be finite and > 0)")
        return self


class StorageBinding(FleetModel):
    """The pool's nodes are clients of a storage cluster through one of their NICs."""

    cluster: Name
    nic: Name
    role: str


class NicAddress(FleetModel):
    nic: Name
    ip: IPv4


class NicAttachment(FleetModel):
    nic: Name
    switch: Name
    port: str = ""


class NodeOverride(FleetModel):
    """Sparse per-node override of generated identities and attachments."""

    ordinal: int
    hostname: Name | None = None
    ip: IPv4 | None = None
    serial: str = ""
    tray_id: str = ""
    bmc: Device | None = None
    nic_addresses: list[NicAddress] = Field(default_factory=list)
    attachments: list[NicAttachment] = Field(default_factory=list)
    nvlink: HgxNvLink | None = None


class UsableMemory(FleetModel):
    """Usable framebuffer bytes of one GPU, as measured (with where it was read)."""

    bytes: int
    source: Source

    @model_validator(mode="after")
    def _positive(self) -> UsableMemory:
        if self.bytes <= 0:
            raise ValueError("usable memory requires sourced positive bytes")
        return self


class GpuOverride(FleetModel):
    """Sparse per-GPU override of generated identities."""

    node_ordinal: int
    slot: int
    uuid: str = ""
    board_serial: str = ""
    pci_bus_id: str = ""
    usable_memory: UsableMemory | None = None
    hgx_module_id: int | None = None


_POOL_REASON = "invalid pool name/count/hardware"
_GPUS_PER_NODE = {
    "pcie": (range(4, 9), "pcie gpusPerNode must be in [4,8]"),
    "hgx": (range(8, 9), "hgx gpusPerNode must be 8"),
    "nvl72": (range(4, 5), "NVL72 requires four GPUs per tray"),
}


class Pool(FleetModel):
    """Identical nodes of one shape and GPU model, with their placements, NICs and overrides."""

    name: Name
    shape: Annotated[Shape, one_of(_POOL_REASON, *SHAPES)]
    gpu_model: str
    node_count: int
    gpus_per_node: int
    hostname_prefix: Name
    kubernetes_cluster: str = ""
    scalable_unit: str = ""
    node_ips: AddressBlock | None = None
    hardware: Hardware
    operating: Operating
    bmc: Bmc = Bmc()
    placements: list[Placement] = Field(default_factory=list)
    nics: list[PoolNic] = Field(default_factory=list)
    storage: StorageBinding | None = None
    nodes: list[NodeOverride] = Field(default_factory=list)
    gpus: list[GpuOverride] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _hgx_only_fields(cls, data: Any) -> Any:
        # Presence alone (even an explicit null) is refused on other shapes, so a field that
        # would be silently ignored can never look accepted (§1.2 step 4).
        if isinstance(data, dict) and data.get("shape") != "hgx":
            for override, field in (("nodes", "nvlink"), ("gpus", "hgxModuleId")):
                items = data.get(override)
                if isinstance(items, list) and any(
                    isinstance(i, dict) and (field in i or _snake(field) in i) for i in items
                ):
                    written = any(isinstance(i, dict) and field in i for i in items)
                    label = field if written else _snake(field)  # the key as the file wrote it
                    raise ValueError(f"field {label} is supported only for hgx shape")
        return data

    @model_validator(mode="after")
    def _counts(self) -> Pool:
        if self.node_count <= 0:
            raise ValueError(f"{_POOL_REASON} (nodeCount must be > 0)")
        allowed, reason = _GPUS_PER_NODE[self.shape]
        if self.gpus_per_node not in allowed:
            raise ValueError(reason)
        return self


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)


class FaultWindow(FleetModel):
    """When a declared fault is active: from ``start`` (inclusive) to ``end`` (exclusive)."""

    start: datetime | None = None
    end: datetime | None = None

    @model_validator(mode="after")
    def _ordered(self) -> FaultWindow:
        for t in (self.start, self.end):
            if t is not None and t.tzinfo is None:
                raise ValueError("fault window times need a timezone (e.g. 2026-10-02T00:00:00Z)")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError("fault window must end after it starts")
        return self


def _fault_mode(value: str) -> str:
    if not value or not value.replace("_", "a").isalnum() or not value[0].isalpha():
        raise ValueError(f"invalid fault mode {value!r}")
    return value


def _fault_target(value: str) -> str:
    prefix, _, rest = value.partition(":")
    if not prefix or not rest:
        raise ValueError(f"fault target must be a key such as gpu:<host>/<slot>, got {value!r}")
    return value


class Fault(FleetModel):
    """A declared fault: data the simulator reads (mode, target key, intensity, window)."""

    mode: Annotated[str, AfterValidator(_fault_mode)]
    target: Annotated[str, AfterValidator(_fault_target)]
    intensity: Annotated[float, Field(ge=0)] = 1.0
    window: FaultWindow = FaultWindow()

    @model_validator(mode="after")
    def _finite(self) -> Fault:
        if not math.isfinite(self.intensity):
            raise ValueError("fault intensity must be finite")
        return self


class FleetSpec(FleetModel):
    """Everything a fleet declares. Declaration order never changes the built topology."""

    sites: list[Site] = Field(default_factory=list)
    racks: list[Rack] = Field(default_factory=list)
    fabrics: list[Fabric] = Field(default_factory=list)
    storage_clusters: list[StorageCluster] = Field(default_factory=list)
    pools: list[Pool] = Field(default_factory=list)
    schedulers: list[Scheduler] = Field(default_factory=list)
    faults: list[Fault] = Field(default_factory=list)


class Metadata(FleetModel):
    """Name (the seed of every synthetic identity) and free labels."""

    name: Name
    labels: dict[str, str] = Field(default_factory=dict)


class Fleet(FleetModel):
    """A ``fleet.glimmer.ai/v1alpha1`` ``Fleet`` resource (the version is ``API_VERSION``)."""

    api_version: Literal["fleet.glimmer.ai/v1alpha1"] = "fleet.glimmer.ai/v1alpha1"
    kind: Literal["Fleet"] = "Fleet"
    metadata: Metadata
    spec: FleetSpec

    @property
    def seed(self) -> str:
        """The determinism root of every identity: the fleet's name."""
        return self.metadata.name
