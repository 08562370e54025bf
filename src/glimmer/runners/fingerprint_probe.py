"""fingerprint-probe (§9.16): the accelerators the PCI bus reports, from a read-only sysfs.

Reads ``<FINGERPRINT_PROBE_SYSFS>/bus/pci/devices/*`` (default ``/host/sys``): class, vendor,
device and the bound driver. An accelerator is a 3D controller (0x0302), a display controller
(0x0380, AMD Instinct), a processing accelerator (0x1200), or a VGA controller (0x0300) made by
an accelerator vendor: the GB10 presents its GPU as VGA, and ignoring it once made a DGX Spark
count zero accelerators (§12 lesson 30), while a BMC's VGA (ASPEED, Matrox) is no accelerator.

Exit: 0 read (even zero accelerators: the count is then a real 0), 2 when the sysfs mount is
missing, 3 machinery. Never 1: this probe measures nothing about a part.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from glimmer.runners.hostpaths import read_text
from glimmer.runners.outcome import Outcome, errored, passed, skipped
from glimmer.runners.program import Context, main

KIND = "fingerprint-probe"
SYSFS = "FINGERPRINT_PROBE_SYSFS"
DEFAULT_SYSFS = "/host/sys"

VENDOR_NAMES = {
    "0x10de": "NVIDIA",
    "0x1002": "AMD",
    "0x1022": "AMD",
    "0x8086": "Intel",
    "0x1da3": "Habana",
    "0x1e52": "Tenstorrent",
}
ACCELERATOR_CLASSES = ("0x0302", "0x0380", "0x1200")  # class code without the prog-if byte
VGA_CLASS = "0x0300"
VGA_ACCELERATOR_VENDORS = ("0x10de", "0x1002")


@dataclass(frozen=True)
class PciFunction:
    address: str
    class_code: str  # 0xCCSS, the prog-if byte dropped
    vendor: str
    device: str
    driver: str | None


def is_accelerator(fn: PciFunction) -> bool:
    if fn.class_code in ACCELERATOR_CLASSES:
        return True
    return fn.class_code == VGA_CLASS and fn.vendor in VGA_ACCELERATOR_VENDORS


def read_function(path: Path) -> PciFunction | None:
    """One PCI function; None when its identity files cannot be read."""
    klass, vendor, device = (read_text(path / name) for name in ("class", "vendor", "device"))
    if klass is None or vendor is None or device is None:
        return None
    driver_link = path / "driver"
    driver = os.path.basename(os.readlink(driver_link)) if driver_link.is_symlink() else None
    return PciFunction(path.name, klass.lower()[:6], vendor.lower(), device.lower(), driver)


def probe(ctx: Context) -> Outcome:
    sysfs = ctx.settings.path(SYSFS, DEFAULT_SYSFS)
    devices_dir = sysfs / "bus" / "pci" / "devices"
    if not devices_dir.is_dir():  # an empty mount point reads the same as no mount
        return skipped(f"no sysfs at {sysfs} ({devices_dir} is missing): mount /sys there")
    try:
        entries = sorted(devices_dir.iterdir())
    except OSError as exc:
        return errored(f"cannot list {devices_dir}: {exc.strerror or exc}")
    functions = [fn for fn in (read_function(e) for e in entries) if fn is not None]
    if entries and not functions:
        return errored(f"no PCI function under {devices_dir} could be read")
    accelerators = [fn for fn in functions if is_accelerator(fn)]
    report = ctx.report
    report.metric("acceleratorCount", len(accelerators))
    if accelerators:
        report.metric("pciAddresses", ",".join(fn.address for fn in accelerators))
        report.metric("pciVendorIds", ",".join(fn.vendor for fn in accelerators))
        report.metric("pciDeviceIds", ",".join(fn.device for fn in accelerators))
        vendors = dict.fromkeys(VENDOR_NAMES.get(fn.vendor, fn.vendor) for fn in accelerators)
        report.metric("acceleratorVendors", ",".join(vendors))
        drivers = dict.fromkeys(fn.driver for fn in accelerators if fn.driver)
        if drivers:  # omitted when none is bound: "no driver" is not a driver name
            report.metric("acceleratorDrivers", ",".join(drivers))
    return passed()


if __name__ == "__main__":
    main(KIND, probe)
