"""What changed between two identities, in the words of the drift message:
``kernel a → b; osImage a → b; gpus 8×nvidia H100 sm_90 → 7×nvidia H100 sm_90; nics …;
label k=v added; label k=v removed; label k a → b``."""

from __future__ import annotations

from itertools import groupby

from glimmer.fingerprint.identity import Gpu, Identity, Nic


def _gpus(gpus: tuple[Gpu, ...]) -> str:
    if not gpus:
        return "none"
    parts = []
    for (vendor, model, arch, memory, driver), run in groupby(
        gpus, key=lambda g: (g.vendor, g.model, g.arch, g.memory_bytes, g.driver_version)
    ):
        words = [w for w in (vendor, model, arch) if w]
        if memory:
            words.append(f"{memory // 2**20}MiB")
        if driver:
            words.append(f"driver {driver}")
        parts.append(f"{len(list(run))}×{' '.join(words) or 'unknown'}")
    return ", ".join(parts)


def _nic(nic: Nic) -> str:
    words = [nic.name]
    words += [w for w in (nic.link_layer, nic.model, nic.rdma_device) if w]
    if nic.speed_mbps is not None:
        words.append(f"{nic.speed_mbps}Mb/s")
    if nic.mtu is not None:
        words.append(f"mtu {nic.mtu}")
    return " ".join(words)


def _nics(nics: tuple[Nic, ...]) -> str:
    return ", ".join(_nic(n) for n in nics) or "none"


def describe(before: Identity, after: Identity) -> str:
    """The changes from ``before`` to ``after``, "; "-separated ("" when none)."""
    out: list[str] = []
    if before.kernel != after.kernel:
        out.append(f"kernel {before.kernel or '?'} → {after.kernel or '?'}")
    if before.os_image != after.os_image:
        out.append(f"osImage {before.os_image or '?'} → {after.os_image or '?'}")
    if before.gpus != after.gpus:
        out.append(f"gpus {_gpus(before.gpus)} → {_gpus(after.gpus)}")
    if before.nics != after.nics:
        out.append(f"nics {_nics(before.nics)} → {_nics(after.nics)}")
    old, new = dict(before.labels), dict(after.labels)
    for key in sorted(old.keys() | new.keys()):
        if key not in old:
            out.append(f"label {key}={new[key]} added")
        elif key not in new:
            out.append(f"label {key}={old[key]} removed")
        elif old[key] != new[key]:
            out.append(f"label {key} {old[key]} → {new[key]}")
    return "; ".join(out)
