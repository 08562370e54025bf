"""Capability gates (§3.5): what a consumer may claim about a selection, failing closed.

A consumer that wants to report usable framebuffer, a thermal envelope, NVLink correlation or
NVSwitch/Grace entity ids asks here first; anything not backed by a sourced declaration is
refused with the reason, never guessed.
"""

from __future__ import annotations

from enum import StrEnum

from glimmer.api.fleet import Operating
from glimmer.errors import InputError, Location
from glimmer.fleet import skus
from glimmer.fleet.selection import Selection
from glimmer.fleet.topology import Topology


class Capability(StrEnum):
    USABLE_FRAMEBUFFER = "UsableFramebuffer"
    THERMAL_ENVELOPE = "ThermalEnvelope"
    NVLINK_CORRELATION = "NVLinkCorrelation"
    NVSWITCH_ENTITIES = "NVSwitchEntities"
    GRACE_ENTITIES = "GraceEntities"


_NVLINK = {Capability.NVLINK_CORRELATION, Capability.NVSWITCH_ENTITIES, Capability.GRACE_ENTITIES}


def require(topo: Topology, sel: Selection, wanted: set[Capability]) -> None:
    """Raise InputError naming the first capability the selection cannot back."""

    def refuse(reason: str) -> InputError:
        return InputError(reason, Location(obj=f"Fleet/{topo.name}"))

    gpus = sel.gpus(topo)
    if Capability.USABLE_FRAMEBUFFER in wanted:
        for g in gpus:
            if topo.gpu_usable_memory[g] <= 0:
                raise refuse(f"usable framebuffer requires sourced bytes for {topo.gpu_keys[g]}")
    if Capability.THERMAL_ENVELOPE in wanted:
        for n in sel.nodes:
            node = topo.nodes[n]
            sku = skus.lookup(node.model)
            limits = (sku.slowdown_c, sku.shutdown_c, sku.max_operating_c) if sku else (None,)
            if any(limit is None for limit in limits):
                raise refuse(f"thermal envelope unknown for {node.model}")
            op = _operating(topo, node.pool)
            worst = op.ambient_temp_c + op.full_power_rise_c + op.cooling_fault_rise_c
            if any(worst > limit for limit in limits if limit is not None):
                raise refuse("declared thermal envelope exceeds sourced limit")
    if not wanted & _NVLINK:
        return
    selected = set(sel.domains)
    if Capability.NVLINK_CORRELATION in wanted and any(
        topo.domains[int(topo.gpu_domain[g])].kind == "hgx" for g in gpus if topo.gpu_domain[g] >= 0
    ):
        # HGX cannot launder an unmapped PCIe GPU into a correlated selection.
        for g in gpus:
            d = int(topo.gpu_domain[g])
            if d < 0 or d not in selected or not topo.domains[d].correlated:
                raise refuse(f"selected GPU has no sourced NVLink domain {topo.gpu_keys[g]}")
    if not selected:
        raise refuse("selected NVLink domains absent")
    for d in sorted(selected):
        domain = topo.domains[d]
        if Capability.NVLINK_CORRELATION in wanted and not domain.complete_map:
            raise refuse("NVLink correlation requires complete sourced endpoint/vendor map")
        if Capability.NVSWITCH_ENTITIES in wanted:
            for s in domain.switches:
                if topo.nvswitches[s].key not in domain.entity_keys:
                    raise refuse(f"sourced NVSwitch entity missing for {topo.nvswitches[s].key}")
    if Capability.GRACE_ENTITIES in wanted:
        for n in sel.nodes:
            node = topo.nodes[n]
            if not node.cpu_keys:
                raise refuse("Grace entities absent")
            mapped = {k for d in selected for k in topo.domains[d].entity_keys}
            for cpu in node.cpu_keys:
                if cpu not in mapped:
                    raise refuse(f"sourced Grace entity missing for {cpu}")


def _operating(topo: Topology, pool: str) -> Operating:
    return next(p.operating for p in topo.fleet.spec.pools if p.name == pool)
