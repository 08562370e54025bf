"""NVLink blocks of a Fleet: the NVL72 rack block (§1.8) and the HGX node block (§1.9).

These are the declared facts only; the topology builder checks them against the rack or node they
sit on (membership, coverage, the complete-map check) because that needs the built identities.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from glimmer.api.fleet_parts import Device, FleetModel, Name, Source

HGX_PROFILE = "dgxh100_hgxh100-595.91.07"


class Partition(FleetModel):
    """A named set of GPUs (by ``gpu:`` key) inside one NVLink domain."""

    name: Name
    gpus: list[str] = Field(default_factory=list)


class SwitchOverride(FleetModel):
    """Sparse override of one NVSwitch's name or serial."""

    ordinal: int
    name: Name | None = None
    serial: str = ""


class SwitchTray(FleetModel):
    """Sparse override of one NVL72 switch tray (0..8) and its two switches."""

    ordinal: int
    id: str = ""
    bmc: Device | None = None
    switches: list[SwitchOverride] = Field(default_factory=list)


class PortMapping(FleetModel):
    """The vendor's id for one NVSwitch port, with its source."""

    tray: int
    switch: int
    port: int
    vendor_id: str
    source: Source


class LinkMapping(FleetModel):
    """One sourced GPU link → NVSwitch port edge of an NVL72 domain."""

    gpu: str
    gpu_link_index: int
    tray: int
    switch: int
    port: int
    source: Source


class EntityMapping(FleetModel):
    """The vendor's entity id for one member of a domain (GPU, switch, port, CPU …)."""

    kind: str
    key: str
    vendor_id: str
    source: Source

    @model_validator(mode="after")
    def _complete(self) -> EntityMapping:
        if not (self.kind and self.vendor_id and self.key):
            raise ValueError("invalid entity mapping")
        return self


class Nvl72NvLink(FleetModel):
    """The rack-level NVLink block of an NVL72 rack."""

    domain: Name = "default"
    correlated: bool = False
    links_per_gpu: Annotated[int, Field(ge=0)] | None = None
    link_count_source: Source | None = None
    partitions: list[Partition] = Field(default_factory=list)
    switch_trays: list[SwitchTray] = Field(default_factory=list)
    port_mappings: list[PortMapping] = Field(default_factory=list)
    links: list[LinkMapping] = Field(default_factory=list)
    entity_mappings: list[EntityMapping] = Field(default_factory=list)

    @model_validator(mode="after")
    def _sourced_count(self) -> Nvl72NvLink:
        if self.links_per_gpu is not None and (
            self.links_per_gpu <= 0 or self.link_count_source is None
        ):
            raise ValueError("linksPerGpu requires positive sourced count")
        return self


class HgxNvLink(FleetModel):
    """The node-level NVLink block of an HGX server (its baseboard domain)."""

    profile: str = ""
    domain: Name = "default"
    correlated: bool = False
    partitions: list[Partition] = Field(default_factory=list)
    switches: list[SwitchOverride] = Field(default_factory=list)
    entity_mappings: list[EntityMapping] = Field(default_factory=list)

    @model_validator(mode="after")
    def _profile(self) -> HgxNvLink:
        if self.profile not in ("", HGX_PROFILE):
            raise ValueError(f'unsupported HGX NVLink profile "{self.profile}"')
        return self
