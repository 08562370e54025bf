"""Kubernetes resource quantities (``80Gi``, ``81559M``, ``1e3``) read as integers, for GPU
memory labels and allocatable counts. Anything unreadable is None: an unknown, never a zero."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_SUFFIX = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_QUANTITY = re.compile(
    r"^([+]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$"
)
MIB = 2**20


def quantity(text: str) -> int | None:
    """The quantity as a whole number (rounded down), or None if it is not one."""
    match = _QUANTITY.match(text.strip())
    if match is None:
        return None
    try:
        value = Decimal(match.group(1)) * _SUFFIX[match.group(2) or ""]
    except InvalidOperation:
        return None
    return int(value) if value >= 0 else None


def memory_bytes(text: str) -> int | None:
    """GPU memory from a label: a plain integer is MiB (GPU Feature Discovery's unit), anything
    else a Kubernetes quantity in bytes."""
    value = text.strip()
    if value.isascii() and value.isdigit():
        return int(value) * MIB
    return quantity(value)


def whole(text: str | int) -> int | None:
    """A plain non-negative integer, or None."""
    if isinstance(text, int):
        return text if text >= 0 else None
    value = text.strip()
    return int(value) if value.isascii() and value.isdigit() else None
