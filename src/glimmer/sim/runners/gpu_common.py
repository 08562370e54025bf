"""What the CUDA runners share: the devices they may load, their identity lines, Xid watching
and the event rates faults drive."""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.common import device_budget, driver_refusal
from glimmer.sim.runners.emit import Stdout
from glimmer.sim.runners.node import Device, NodeView
from glimmer.sim.telemetry import COUNTER_RATE, XID_OF_MODE

# The driver every simulated node reports (a label; the fleet declares no driver).
DRIVER_VERSION = "570.133.20"
# Xid 79: "GPU has fallen off the bus"; every NVML probe of the lost device logs it again.
XID_FALLEN_OFF_BUS = 79
# Events per second at intensity 1 for faults that are events to a runner (synthetic, chosen so
# a 30 s window at full intensity always sees several). ECC and row-remap rates are telemetry's.
XID_BURST_RATE = 0.2
PCIE_REPLAY_RATE = 0.5  # replays/s on a downtrained link at intensity 1 (retraining noise)
ECC_UNCORRECTABLE_RATE = COUNTER_RATE["gpu_ecc_uncorrectable"]
ECC_CORRECTABLE_RATE = COUNTER_RATE["gpu_ecc_correctable"]
ROW_REMAP_RATE = COUNTER_RATE["gpu_row_remap"]
SDC_RATE = 1.0 / 30.0  # distinct corruption incidents per second of load at intensity 1


@dataclass(frozen=True)
class Devices:
    visible: tuple[Device, ...]
    allocated: tuple[Device, ...]


def missing_gpus(view: NodeView, out: Stdout) -> RunnerOutput | None:
    """Fail (exit 1) when the runtime shows fewer GPUs than the node has.

    A node's GPU count is not something a static profile can pin (its built-in profiles serve
    4-GPU and 8-GPU shapes alike), so the runner holds the count itself: the node's GPUs (the
    fleet's declared or labelled GPUs; on hardware, the NVIDIA functions the PCI bus still
    enumerates) against the devices the runtime lets it open. A GPU that fell off the bus is
    gone from the second and not from the first; iterating only what is visible would judge
    7 of 8 GPUs and pass the node. It is a fault of the node, measured, so exit 1, not 3."""
    lost = [d for d in view.devices if not d.present]
    if not lost:
        return None
    out.kv("devicesVisible", len(view.visible))
    slots = ", ".join(str(d.slot) for d in lost)
    return out.failed(
        f"{len(view.visible)} of the node's {len(view.devices)} GPUs are visible "
        f"(missing: slot {slots}); a node short of a GPU is not judged on the rest",
        1.0,
    )


def allocate(view: NodeView, call: RunnerCall, out: Stdout) -> Devices | RunnerOutput:
    """The devices this execution may load, or the runner's refusal: exit 3 for a device
    budget it cannot honour, exit 1 for a node short of one of its GPUs."""
    refused = driver_refusal(view, out)
    if refused is not None:
        return refused
    short = missing_gpus(view, out)
    if short is not None:
        return short
    visible = view.visible
    budget = device_budget(call)
    if isinstance(budget, str):
        return out.errored(budget, 0.5)
    if budget is None:
        return Devices(visible, visible)
    if budget == 0 and visible:
        return out.errored(f"device budget is 0 but {len(visible)} devices are visible", 0.5)
    if budget != len(visible):
        return out.errored(
            f"device budget {budget} (BURNIN_RESOURCE_LIMITS) differs from the "
            f"{len(visible)} devices visible",
            0.5,
        )
    return Devices(visible, visible)


def identity(out: Stdout, dev: Device) -> None:
    out.kv("gpuName", dev.name)
    part = dev.part
    out.kv("computeCap", part.compute_cap if part else "unknown")
    out.kv("pciBusId", dev.pci_bus_id)
    out.kv("driverVersion", DRIVER_VERSION)
    out.kv("migMode", "disabled")


def xid_events(view: NodeView, devices: tuple[Device, ...], seconds: float) -> tuple[int, int]:
    """(Xid events in a window of ``seconds``, the latest code) on these devices and any that
    fell off the bus."""
    count = 0
    code = 0
    for dev in view.devices:
        burst = dev.level("gpu_xid_burst")
        if burst > 0:
            count += max(1, int(XID_BURST_RATE * burst * seconds))
        for mode, xid in XID_OF_MODE.items():
            if dev.level(mode) > 0 and mode != "gpu_nvlink_error_burst":
                code = max(code, xid)
        if dev.level("gpu_ecc_uncorrectable") > 0:
            count += max(1, int(ECC_UNCORRECTABLE_RATE * seconds))
        if not dev.present:
            count += 1
            code = XID_FALLEN_OFF_BUS
    if count and code == 0:
        code = XID_OF_MODE["gpu_xid_burst"]
    return count, code


def window_count(rate: float, level: float, seconds: float) -> int:
    """Events a fault at ``level`` causes in a window: at least one while it is active."""
    if level <= 0.0:
        return 0
    return max(1, int(rate * level * seconds))
