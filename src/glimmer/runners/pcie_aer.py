"""PCIe Advanced Error Reporting counters from sysfs (``aer_dev_correctable``,
``aer_dev_fatal``, ``aer_dev_nonfatal`` under each PCI function): lifetime totals since boot.

Each file lists one counter per line and a ``TOTAL_ERR_*`` line; a file without the total line
is summed. A host whose kernel exposes no AER file at all reports the status ``absent`` and no
counts (absence is not a zero).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

KINDS = ("fatal", "nonfatal", "correctable")


@dataclass(frozen=True)
class AerCounts:
    status: str  # ok | absent | unreadable
    totals: dict[str, int]  # kind -> total over every function that exposes it
    functions: int = 0


def parse_counter_file(text: str) -> int | None:
    total = None
    summed = 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            continue
        if parts[0].startswith("TOTAL_ERR"):
            total = int(parts[1])
        else:
            summed += int(parts[1])
    return total if total is not None else summed


def read_aer(sysfs: Path) -> AerCounts:
    devices = sysfs / "bus" / "pci" / "devices"
    try:
        entries = sorted(devices.iterdir())
    except OSError:
        return AerCounts("absent", {})
    totals = dict.fromkeys(KINDS, 0)
    seen = readable = 0
    functions = set()
    for entry in entries:
        for kind in KINDS:
            path = entry / f"aer_dev_{kind}"
            if not path.exists():
                continue
            seen += 1
            try:
                value = parse_counter_file(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
            if value is None:
                continue
            readable += 1
            totals[kind] += value
            functions.add(entry.name)
    if not seen:
        return AerCounts("absent", {})
    if readable < seen:  # a total over some functions only would understate
        return AerCounts("unreadable", {})
    return AerCounts("ok", totals, len(functions))
