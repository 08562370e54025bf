"""amdgpu RAS error counters from sysfs: ``<pci function>/ras/<block>_err_count`` holding
``ue: N`` (uncorrectable) and ``ce: N`` (correctable) lifetime counts, for every AMD GPU.

The node total is reported only when every counter file answered; the files that did not are
named instead (``amdRasUnreadableFiles``), so an unreadable counter is never summed as a zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from glimmer.runners.hostpaths import read_text

AMD_VENDOR = "0x1002"


@dataclass
class RasCounts:
    gpus: int = 0
    uncorrectable: int = 0
    correctable: int = 0
    unreadable: list[str] = field(default_factory=list)


def _counts(text: str) -> tuple[int, int] | None:
    found: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if value.strip().isdigit():
            found[key.strip()] = int(value.strip())
    if "ue" not in found or "ce" not in found:
        return None
    return found["ue"], found["ce"]


def read_ras(sysfs: Path) -> RasCounts:
    """The summed counters of every AMD function that exposes a ``ras`` directory."""
    out = RasCounts()
    devices = sysfs / "bus" / "pci" / "devices"
    try:
        entries = sorted(devices.iterdir())
    except OSError:
        return out
    for entry in entries:
        ras = entry / "ras"
        if read_text(entry / "vendor") != AMD_VENDOR or not ras.is_dir():
            continue
        out.gpus += 1
        for counter in sorted(ras.glob("*_err_count")):
            text = read_text(counter)
            counts = _counts(text) if text is not None else None
            if counts is None:
                out.unreadable.append(f"{entry.name}/{counter.name}")
                continue
            out.uncorrectable += counts[0]
            out.correctable += counts[1]
    return out
