"""Per-product cells: which cell of a GPU-class variant matrix judges this node's GPUs.

Some figures are per product (host-to-device copy bandwidth is ~55 GB/s over PCIe Gen5, ~24 over
Gen4 and several hundred over NVLink-C2C), so one absolute gate either fails healthy parts or
clears a 4x loss on faster ones. A profile gates such a test per product with one variant cell
per class of GPUs (axis ``gpuClass``, so ``BURNIN_VARIANT_GPUCLASS``), each cell carrying the
gates of its class, and tells every cell which GPU names belong to which class in
``BURNIN_GPU_CLASSES``::

    pcie-gen5=NVIDIA H100 80GB HBM3,NVIDIA H200;pcie-gen4=NVIDIA L40S

A runner asks :func:`choose` before touching the hardware: it measures in its class's cell and
declares Skip in the others, printing the node's class as the label metric ``gpuClass`` in
both, so a report can tell a cell that declined a node another cell judges
(``variantAxes.gpuClass`` differs from the metric) from one that skipped for a reason of its
own. Everything that would let a node pass by omission is an Error instead: a GPU no class
lists (every cell would skip it), a node whose GPUs fall in two classes (no single cell's gates
fit it), a malformed table, or a cell value the table does not name
(the runner guidance: an unknown variant value is exit 3).

Without the axis the test is a plain one and the runner measures, whatever the table says;
that keeps a referenced test usable outside the matrix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

CLASSES_ENV = "BURNIN_GPU_CLASSES"
AXIS = "gpuClass"
AXIS_ENV = "BURNIN_VARIANT_GPUCLASS"


class Choice(StrEnum):
    MEASURE = "measure"
    SKIP = "skip"
    ERROR = "error"


@dataclass(frozen=True)
class ClassChoice:
    choice: Choice
    reason: str = ""  # the marker's reason for SKIP and ERROR
    home: str = ""  # the class the node's GPUs belong to, when the table places them in one


def parse_classes(text: str) -> dict[str, tuple[str, ...]]:
    """The class table: class name -> GPU names. ValueError names the first bad entry."""
    classes: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for raw in text.split(";"):
        entry = raw.strip()
        if not entry:
            continue
        name, sep, members = entry.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValueError(f"entry {entry!r} is not <class>=<GPU name>,<GPU name>...")
        gpus = tuple(g.strip() for g in members.split(",") if g.strip())
        if not gpus:
            raise ValueError(f"class {name!r} lists no GPU names")
        if name in classes:
            raise ValueError(f"class {name!r} appears twice")
        for gpu in gpus:
            if gpu in owner:
                raise ValueError(f"GPU {gpu!r} is in both class {owner[gpu]!r} and {name!r}")
            owner[gpu] = name
        classes[name] = gpus
    if not classes:
        raise ValueError("it names no class")
    return classes


def choose(env: Mapping[str, str], gpu_names: Sequence[str]) -> ClassChoice:
    """Whether a runner in this cell measures ``gpu_names`` (one per visible GPU), skips, or
    errors. With no GPU visible at all every cell measures, so the runner's own rules (a
    missing GPU fails, no device skips) decide in every cell alike."""
    cell = env.get(AXIS_ENV, "").strip()
    if not cell:
        return ClassChoice(Choice.MEASURE)
    text = env.get(CLASSES_ENV, "")
    if not text.strip():
        return ClassChoice(
            Choice.ERROR, f"{AXIS_ENV}={cell} but {CLASSES_ENV} does not say which GPUs it judges"
        )
    try:
        classes = parse_classes(text)
    except ValueError as exc:
        return ClassChoice(Choice.ERROR, f"{CLASSES_ENV} is malformed: {exc}")
    if cell not in classes:
        known = ", ".join(sorted(classes))
        return ClassChoice(
            Choice.ERROR, f"{AXIS_ENV}={cell} names no class of {CLASSES_ENV} ({known})"
        )
    if not gpu_names:
        return ClassChoice(Choice.MEASURE)
    owner = {gpu: name for name, gpus in classes.items() for gpu in gpus}
    unlisted = sorted({g for g in gpu_names if g not in owner})
    if unlisted:
        return ClassChoice(
            Choice.ERROR,
            f"GPU {', '.join(map(repr, unlisted))} is in no class of {CLASSES_ENV}, so no cell "
            "would judge it; add it to the class whose gates fit it",
        )
    found = sorted({owner[g] for g in gpu_names})
    if len(found) > 1:
        return ClassChoice(
            Choice.ERROR,
            f"this node's GPUs fall in classes {', '.join(found)}; no single cell's gates fit it",
        )
    if found[0] != cell:
        gpus = ", ".join(sorted(set(gpu_names)))
        return ClassChoice(
            Choice.SKIP, f"{gpus} is judged by the {found[0]} cell, not {cell}", found[0]
        )
    return ClassChoice(Choice.MEASURE, home=cell)
