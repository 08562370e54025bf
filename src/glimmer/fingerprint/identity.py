"""The salient identity of a node: what it runs (OS image, kernel) and what it is (hardware
labels, GPUs, NICs). Values only; where they come from is the capture modules' business.

Empty strings and None mean "not known". A field going from known to unknown (or back) does
change the digest: the capture saw something different, and that is worth reporting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from glimmer.api.fingerprint import GPUInfo, NICInfo, NodeFingerprintStatus
from glimmer.fingerprint.keys import MAX_GPUS


@dataclass(frozen=True)
class Gpu:
    """One accelerator. No UUID or serial: an identical part swapped in is not drift."""

    index: int
    vendor: str = ""
    model: str = ""
    arch: str = ""
    memory_bytes: int | None = None
    driver_version: str = ""

    def to_api(self) -> GPUInfo:
        return GPUInfo.model_validate(
            _present(
                {
                    "index": self.index,
                    "vendor": self.vendor,
                    "model": self.model,
                    "arch": self.arch,
                    "memoryBytes": self.memory_bytes,
                    "driverVersion": self.driver_version,
                }
            )
        )

    @classmethod
    def from_api(cls, info: GPUInfo) -> Gpu:
        return cls(
            index=info.index,
            vendor=info.vendor or "",
            model=info.model or "",
            arch=info.arch or "",
            memory_bytes=info.memory_bytes,
            driver_version=info.driver_version or "",
        )


@dataclass(frozen=True)
class Nic:
    """One network interface (or an RDMA device with no network interface)."""

    name: str
    role: str = ""
    pci_vendor: str = ""
    model: str = ""
    rdma_device: str = ""
    link_layer: str = ""
    speed_mbps: int | None = None
    mtu: int | None = None

    def to_api(self) -> NICInfo:
        return NICInfo.model_validate(
            _present(
                {
                    "name": self.name,
                    "role": self.role,
                    "pciVendor": self.pci_vendor,
                    "model": self.model,
                    "rdmaDevice": self.rdma_device,
                    "linkLayer": self.link_layer,
                    "speedMbps": self.speed_mbps,
                    "mtu": self.mtu,
                }
            )
        )

    @classmethod
    def from_api(cls, info: NICInfo) -> Nic:
        return cls(
            name=info.name,
            role=info.role or "",
            pci_vendor=info.pci_vendor or "",
            model=info.model or "",
            rdma_device=info.rdma_device or "",
            link_layer=info.link_layer or "",
            speed_mbps=info.speed_mbps,
            mtu=info.mtu,
        )


def _present(data: dict[str, object]) -> dict[str, object]:
    # Unknown fields are left out of the status rather than written as "" or null.
    return {k: v for k, v in data.items() if v not in ("", None)}


@dataclass(frozen=True)
class Identity:
    """The salient identity. Labels are sorted; GPUs are capped at 64 and indexed 0..n-1."""

    os_image: str = ""
    kernel: str = ""
    labels: tuple[tuple[str, str], ...] = ()
    gpus: tuple[Gpu, ...] = ()
    nics: tuple[Nic, ...] = ()

    @classmethod
    def of(
        cls,
        *,
        os_image: str = "",
        kernel: str = "",
        labels: Mapping[str, str] | None = None,
        gpus: tuple[Gpu, ...] | list[Gpu] = (),
        nics: tuple[Nic, ...] | list[Nic] = (),
    ) -> Identity:
        """Normalised: labels sorted, GPUs capped and re-indexed, NICs sorted by name."""
        kept = [
            Gpu(i, g.vendor, g.model, g.arch, g.memory_bytes, g.driver_version)
            for i, g in enumerate(list(gpus)[:MAX_GPUS])
        ]
        return cls(
            os_image=os_image,
            kernel=kernel,
            labels=tuple(sorted((labels or {}).items())),
            gpus=tuple(kept),
            nics=tuple(sorted(nics, key=lambda n: n.name)),
        )

    @classmethod
    def from_status(cls, status: NodeFingerprintStatus) -> Identity:
        """The identity a stored fingerprint recorded."""
        return cls(
            os_image=status.os_image or "",
            kernel=status.kernel or "",
            labels=tuple(sorted((status.labels or {}).items())),
            gpus=tuple(Gpu.from_api(g) for g in status.gpus or ()),
            nics=tuple(Nic.from_api(n) for n in status.nics or ()),
        )

    def status_fields(self) -> dict[str, object]:
        """The identity's part of a NodeFingerprint status (snake_case keys)."""
        return {
            "os_image": self.os_image or None,
            "kernel": self.kernel or None,
            "labels": dict(self.labels) or None,
            "gpus": [g.to_api() for g in self.gpus] or None,
            "nics": [n.to_api() for n in self.nics] or None,
        }
