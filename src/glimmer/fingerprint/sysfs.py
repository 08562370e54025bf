"""Hardware as Linux's sysfs shows it: network interfaces (``/sys/class/net``), RDMA devices
(``/sys/class/infiniband``) and PCI accelerators (``/sys/bus/pci/devices``).

The root is a parameter so a test can hand in a small tree, and so a container can read the
host's sysfs mounted elsewhere. A file that cannot be read is unknown (""/None), never zero:
a down link's ``speed`` raises EINVAL, and that says nothing about the port.
"""

from __future__ import annotations

from pathlib import Path

from glimmer.fingerprint.identity import Gpu, Nic
from glimmer.fingerprint.vendor import PCI_VENDORS

# /sys/class/net/<if>/type: ARPHRD_* numbers.
_LINK_LAYERS = {"1": "Ethernet", "32": "InfiniBand"}
# PCI classes of accelerators: display controllers (0x03xx; an NVIDIA GB10 shows as VGA) and
# processing accelerators (0x12xx). Intel's 0x0300 is an integrated desktop GPU, not one.
_ACCELERATOR_CLASSES = ("0x03", "0x12")
_INTEL_IGPU_CLASS = "0x0300"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _int(text: str) -> int | None:
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value >= 0 else None


def _rdma_of(device: Path) -> str:
    names = sorted(p.name for p in (device / "infiniband").glob("*")) if device.is_dir() else []
    return names[0] if names else ""


def network_interfaces(root: Path) -> list[Nic]:
    """Physical interfaces (those backed by a device; lo, veth, bridges are not hardware) and
    RDMA devices that have no network interface, sorted by name."""
    found: dict[str, Nic] = {}
    net = root / "class" / "net"
    for iface in sorted(net.glob("*")) if net.is_dir() else []:
        device = iface / "device"
        if not device.exists():
            continue
        found[iface.name] = Nic(
            name=iface.name,
            pci_vendor=_read(device / "vendor"),
            model=_read(device / "device"),
            rdma_device=_rdma_of(device),
            link_layer=_LINK_LAYERS.get(_read(iface / "type"), ""),
            speed_mbps=_int(_read(iface / "speed")),
            mtu=_int(_read(iface / "mtu")),
        )
    with_netdev = {n.rdma_device for n in found.values() if n.rdma_device}
    ib = root / "class" / "infiniband"
    for dev in sorted(ib.glob("*")) if ib.is_dir() else []:
        if dev.name in with_netdev or dev.name in found:
            continue
        device = dev / "device"
        found[dev.name] = Nic(
            name=dev.name,
            pci_vendor=_read(device / "vendor"),
            model=_read(device / "device"),
            rdma_device=dev.name,
            link_layer=_read(dev / "ports" / "1" / "link_layer"),
        )
    return [found[k] for k in sorted(found)]


def accelerators(root: Path) -> list[Gpu]:
    """PCI devices of accelerator vendors, in PCI address order. The model is the PCI device
    id (sysfs has no product name); the driver version is the bound module's version."""
    out: list[Gpu] = []
    pci = root / "bus" / "pci" / "devices"
    for dev in sorted(pci.glob("*")) if pci.is_dir() else []:
        vendor = PCI_VENDORS.get(_read(dev / "vendor").lower())
        klass = _read(dev / "class").lower()
        if vendor is None or not klass.startswith(_ACCELERATOR_CLASSES):
            continue
        if vendor == "intel" and klass.startswith(_INTEL_IGPU_CLASS):
            continue
        driver = dev / "driver"
        module = driver.resolve().name if driver.exists() else ""
        version = _read(root / "module" / module / "version") if module else ""
        out.append(
            Gpu(len(out), vendor=vendor, model=_read(dev / "device"), driver_version=version)
        )
    return out
