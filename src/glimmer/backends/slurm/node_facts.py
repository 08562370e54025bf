"""What a Slurm node record says about the node: its labels, kernel and architecture, and its
state (drained, down) as the slurm substrate reads it.

Labels are named as a kubelet names its own (``kubernetes.io/hostname``, ``/arch``, ``/os``), so
profiles' selectors written for Kubernetes keep working, plus the Slurm facts under
``slurm.glimmer.ai/`` (docs/slurm.md lists them):

* ``slurm.glimmer.ai/feature.<feature>: "true"`` for each of ``AvailableFeatures``;
* ``slurm.glimmer.ai/partition.<partition>: "true"`` for each partition the node is in;
* ``slurm.glimmer.ai/gres.<name>: "<count>"`` for each generic resource (``gpu:8``), summed
  over its types, and for GPUs ``slurm.glimmer.ai/gpu.count`` (the same count, under the name
  the fingerprint reads a GPU count from) and ``slurm.glimmer.ai/gpu.product`` when the gres
  names exactly one type (``gpu:a100:8``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from glimmer.engine.backend import NodeView

DOMAIN = "slurm.glimmer.ai"
GPU_COUNT = f"{DOMAIN}/gpu.count"
GPU_PRODUCT = f"{DOMAIN}/gpu.product"
ARCHES = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "ppc64le": "ppc64le"}
NULL = "(null)"
# One gres: name[:type][:count][(S:sockets)], e.g. ``gpu:a100:8(S:0-1)``; count defaults to 1.
_GRES = re.compile(
    r"(?P<name>[A-Za-z0-9_.-]+)(?::(?P<type>[^:()]+?))??(?::(?P<count>\d+))?(?:\(.*\))?"
)
# State flags a node that takes no new job carries (``IDLE+DRAIN``, ``MIXED+DRAIN``...).
DRAIN_FLAGS = frozenset({"DRAIN", "DRAINING", "DRAINED"})


@dataclass(frozen=True)
class NodeState:
    """The node's state as Slurm reports it: the base (``IDLE``, ``ALLOCATED``, ``DOWN``...)
    and its flags (``DRAIN``, ``RESERVED``...), ``*`` (not responding) and the like removed."""

    base: str
    flags: frozenset[str]

    @property
    def drained(self) -> bool:
        """Drained or draining: Slurm starts no new job on it."""
        return bool(self.flags & DRAIN_FLAGS) or self.base in DRAIN_FLAGS

    @property
    def down(self) -> bool:
        return self.base in ("DOWN", "FAIL", "FAILING", "FUTURE", "POWERED_DOWN")


def node_state(text: str) -> NodeState:
    """``IDLE+DRAIN+RESERVED`` or ``DOWN*+DRAIN`` as a :class:`NodeState`."""
    words = [w.rstrip("*~#!%$@^-") for w in text.upper().split("+") if w]
    return NodeState(words[0] if words else "UNKNOWN", frozenset(words[1:]))


def _listed(value: str) -> list[str]:
    return [] if value in ("", NULL) else [v for v in value.split(",") if v]


def gres_counts(value: str) -> dict[str, tuple[int, set[str]]]:
    """``gpu:a100:4,gpu:v100:2`` → ``{"gpu": (6, {"a100", "v100"})}``; unparseable parts are
    skipped (a label is a convenience, never a reason to fail a read)."""
    counts: dict[str, tuple[int, set[str]]] = {}
    depth = 0
    part = ""
    parts: list[str] = []
    for char in "" if value in ("", NULL) else value:  # commas inside (S:0,1) do not split
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += char
    parts.append(part)
    for text in filter(None, parts):
        found = _GRES.fullmatch(text)
        if found is None:
            continue
        total, types = counts.get(found["name"], (0, set()))
        if found["type"] and not found["type"].isdigit():
            types.add(found["type"])
        counts[found["name"]] = (total + int(found["count"] or 1), types)
    return counts


def labels_of(record: Mapping[str, str]) -> dict[str, str]:
    """The labels of a node from its ``scontrol show node -o`` record."""
    name = record.get("NodeName", "")
    os_words = record.get("OS", "").split()
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/arch": arch_of(record),
        "kubernetes.io/os": os_words[0].lower() if os_words else "",
    }
    for feature in _listed(record.get("AvailableFeatures", "")):
        labels[f"{DOMAIN}/feature.{feature}"] = "true"
    for partition in _listed(record.get("Partitions", "")):
        labels[f"{DOMAIN}/partition.{partition}"] = "true"
    for gres, (count, types) in gres_counts(record.get("Gres", "")).items():
        labels[f"{DOMAIN}/gres.{gres}"] = str(count)
        if gres == "gpu":
            labels[GPU_COUNT] = str(count)
            if len(types) == 1:
                labels[GPU_PRODUCT] = next(iter(types))
    return {k: v for k, v in labels.items() if v}


def arch_of(record: Mapping[str, str]) -> str:
    arch = record.get("Arch", "")
    return ARCHES.get(arch, "" if arch == NULL else arch)


def facts_of(record: Mapping[str, str]) -> NodeView:
    """The node's facts (name, labels, kernel, architecture), not yet its cordon."""
    os_words = record.get("OS", "").split()
    return NodeView(
        name=record.get("NodeName", ""),
        labels=labels_of(record),
        kernel=os_words[1] if len(os_words) > 1 else "",
        arch=arch_of(record),
    )
