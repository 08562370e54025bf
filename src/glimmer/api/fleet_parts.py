"""Building blocks of the Fleet declaration: names, sources, address blocks, devices, ports.

Every rule here is one of specs/fleet.md §1.3 and §1.5, checked where the value is read, so the
error carries the exact field path. The message text is the spec's reason, verbatim, so an
operator who knows the reference fixture recognises it.
"""

from __future__ import annotations

import ipaddress
import math
import re
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

API_VERSION = "fleet.glimmer.ai/v1alpha1"

_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


class FleetModel(BaseModel):
    """Base of every Fleet model: camelCase on the wire, unknown fields refused, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


def is_name(value: str) -> bool:
    """The name rule of §1.3: 1–63 chars of [a-z0-9.-], starting alphanumeric, no '..' or '.$'."""
    return (
        0 < len(value) <= 63
        and _NAME.match(value) is not None
        and not value.endswith(".")
        and ".." not in value
    )


def _name(value: str) -> str:
    if not is_name(value):
        raise ValueError(
            f"invalid name {value!r} (1-63 chars of a-z 0-9 . -, no '..', no final '.')"
        )
    return value


Name = Annotated[str, AfterValidator(_name)]


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be finite")
    return value


def _non_negative(value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise ValueError("must be finite and >= 0")
    return value


def _positive(value: float) -> float:
    if not math.isfinite(value) or value <= 0:
        raise ValueError("must be finite and > 0")
    return value


def _fraction(value: float) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ValueError("fraction must be finite and within [0,1]")
    return value


Finite = Annotated[float, AfterValidator(_finite)]
NonNegative = Annotated[float, AfterValidator(_non_negative)]
Positive = Annotated[float, AfterValidator(_positive)]
Fraction = Annotated[float, AfterValidator(_fraction)]


def one_of(reason: str, *choices: str) -> BeforeValidator:
    """A validator that refuses anything outside ``choices`` with the spec's ``reason``."""

    def check(value: Any) -> Any:
        if value not in choices:
            raise ValueError(f"{reason} ({value!r} is not one of {', '.join(choices)})")
        return value

    return BeforeValidator(check)


def _ipv4(value: str) -> str:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        raise ValueError(f'invalid IP "{value}"') from None
    return value


IPv4 = Annotated[str, AfterValidator(_ipv4)]


class Source(FleetModel):
    """Provenance of a figure: where it was read (§1.3 source rule)."""

    url: str
    revision: str
    sha256: str
    section: str

    @model_validator(mode="after")
    def _valid(self) -> Source:
        if not (self.url and self.revision and self.section and _HEX64.match(self.sha256)):
            raise ValueError(
                "invalid source: url, revision and section must be non-empty and sha256 "
                "exactly 64 hex characters"
            )
        return self


class AddressBlock(FleetModel):
    """An IPv4 block handing out ``network + startOffset + ordinal`` to each member."""

    cidr: str
    start_offset: int = 0

    @model_validator(mode="after")
    def _canonical(self) -> AddressBlock:
        try:
            ipaddress.IPv4Network(self.cidr, strict=True)
        except ValueError:
            raise ValueError(f"invalid IPv4 address block {self.cidr!r}") from None
        return self

    def address(self, ordinal: int) -> str | None:
        """The address of member ``ordinal``, or None when it falls on network/broadcast/outside."""
        base, size = _network(self.cidr)
        offset = self.start_offset + ordinal
        if not 0 < offset < size - 1:
            return None
        n = base + offset
        return f"{n >> 24}.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


@cache
def _network(cidr: str) -> tuple[int, int]:
    # Parsed once per block: a pool of 25,000 nodes asks for 25,000 addresses of one block.
    net = ipaddress.IPv4Network(cidr)
    return int(net.network_address), net.num_addresses


DeviceKind = Literal[
    "leaf",
    "spine",
    "bmc",
    "nvswitch",
    "pdu",
    "cdu",
    "power_shelf",
    "cnode",
    "dnode",
    "vip",
    "storage_endpoint",
    "management_switch",
]
DEVICE_KINDS: tuple[str, ...] = DeviceKind.__args__  # type: ignore[attr-defined]


class DevicePort(FleetModel):
    """A switch or device port. ``count`` (our extension) declares ``<name>1..<name><count>``."""

    name: Name
    speed_gbps: float
    count: int | None = None

    @model_validator(mode="after")
    def _valid(self) -> DevicePort:
        if not math.isfinite(self.speed_gbps) or self.speed_gbps <= 0:
            raise ValueError("invalid/duplicate device port (speed must be finite and > 0)")
        if self.count is not None and self.count < 1:
            raise ValueError("invalid/duplicate device port (count must be >= 1)")
        return self

    def expand(self) -> list[tuple[str, float]]:
        """The (name, speed) of every port this entry declares, in declared order."""
        if self.count is None:
            return [(self.name, self.speed_gbps)]
        return [(f"{self.name}{i}", self.speed_gbps) for i in range(1, self.count + 1)]


class DeviceNic(FleetModel):
    """A NIC of a facility, fabric or storage device, attached to a fabric switch."""

    name: Name
    ip: IPv4 | None = None
    fabric: Name
    switch: Name
    port: str = ""
    speed_gbps: float

    @model_validator(mode="after")
    def _speed(self) -> DeviceNic:
        if not math.isfinite(self.speed_gbps) or self.speed_gbps <= 0:
            raise ValueError("invalid device NIC (speed must be finite and > 0)")
        return self


class Collection(FleetModel):
    """How a facility device is polled (SNMP or Modbus), with the source of that profile."""

    protocol: Annotated[
        Literal["snmp", "modbus"],
        one_of("collection requires explicit sourced protocol/port/module", "snmp", "modbus"),
    ]
    module: str = ""
    port: int
    modbus_unit: int = 0
    source: Source

    @model_validator(mode="after")
    def _complete(self) -> Collection:
        if not 1 <= self.port <= 65535 or not 0 <= self.modbus_unit <= 247:
            raise ValueError("collection requires explicit sourced protocol/port/module")
        if self.protocol == "snmp" and not self.module:
            raise ValueError("collection requires explicit sourced protocol/port/module")
        return self


class Device(FleetModel):
    """A facility, fabric or storage device (§1.5). Its name lives in the hostname namespace."""

    name: Name
    kind: Annotated[DeviceKind, one_of("unsupported device kind", *DEVICE_KINDS)]
    vendor: str = ""
    model: str = ""
    os_version: str = ""
    serial: str = ""
    management_ip: IPv4 | None = None
    rail: int | None = None
    scalable_unit: str = ""
    static_power_w: float | None = None
    ports: list[DevicePort] = Field(default_factory=list)
    nics: list[DeviceNic] = Field(default_factory=list)
    collection: Collection | None = None

    @model_validator(mode="after")
    def _ports_and_rail(self) -> Device:
        if self.rail is not None and self.rail < 0:
            raise ValueError("negative rail")
        power = self.static_power_w
        if power is not None and (not math.isfinite(power) or power < 0):
            raise ValueError("invalid static power")
        seen: set[str] = set()
        for port in self.ports:
            for name, _ in port.expand():
                if name in seen:
                    raise ValueError(f"invalid/duplicate device port {name!r}")
                seen.add(name)
        nics = [n.name for n in self.nics]
        if len(set(nics)) != len(nics):
            raise ValueError("invalid device NIC (duplicate name)")
        return self

    def port_list(self) -> list[tuple[str, float]]:
        """Every declared port as (name, speed), in declared order."""
        return [p for entry in self.ports for p in entry.expand()]
