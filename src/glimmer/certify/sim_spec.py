"""What a simulated certification runs: the parts of a Certification (specs/certify.md §2.2)
that matter on the simulator, as plain values.

:func:`from_mapping` reads a Certification document (``certify.glimmer.ai/v1alpha1``): target
``nodeSelector``/``nodeNames``, ``categories[]`` with per-category ``options``, and the global
options inlined at spec level (per-category values win; maps replace wholesale, §2.2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from glimmer.errors import InputError, Location

TEST_SCALES = ("intra-node", "intra-rack", "diagnose", "full-scale")
_SIZE = re.compile(r"^([0-9]+)(K|M|G|T)?$")
_OPTION_KEYS = (
    "testScale",
    "nodesPerJob",
    "thresholds",
    "enableMNNVL",
    "maxBytes",
    "minGroupSize",
    "maxSteps",
    "enableCheckpoint",
    "maxRestarts",
)

# Catalog categories the simulator can run (§5.1), and what each one is.
COLLECTIVES = {
    "nccl-all-reduce": "all_reduce",
    "nccl-all-gather": "all_gather",
    "nccl-reduce-scatter": "reduce_scatter",
    "nccl-alltoall": "alltoall",
    "nccl-sendrecv": "sendrecv",
    "nccl-loopback": "all_reduce",
    "nccl-loopback-nvswitch": "all_reduce",
}
DCGM_LEVELS = {f"dcgm-level{i}": i for i in range(1, 5)}
TRAININGS = ("nemotron5-8b", "nemotron5-56b")


@dataclass(frozen=True)
class Options:
    """CategoryOptions after merging global and per-category values."""

    test_scale: str = "full-scale"
    nodes_per_job: int | None = None
    thresholds: Mapping[str, str] = field(default_factory=dict)
    enable_mnnvl: bool | None = None  # None: on for NVL72 parts (§2.2 controller default)
    max_bytes: int = 16 << 30
    min_group_size: int = 2
    max_steps: int = 50
    enable_checkpoint: bool = False
    max_restarts: int = 3


@dataclass(frozen=True)
class Category:
    domain: str
    variant: str
    options: Options

    @property
    def ref(self) -> str:
        return f"{self.domain}/{self.variant}"


@dataclass(frozen=True)
class CertSpec:
    name: str
    node_selector: Mapping[str, str] = field(default_factory=dict)
    node_names: tuple[str, ...] = ()
    categories: tuple[Category, ...] = ()


def _bytes(text: str, where: Location) -> int:
    m = _SIZE.match(text)
    if not m:
        raise InputError(f"maxBytes {text!r} must match ^[0-9]+(K|M|G|T)?$", where)
    scale = {None: 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2)]
    return int(m.group(1)) * scale


def _options(raw: Mapping[str, Any], base: Options, where: Location) -> Options:
    got: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in _OPTION_KEYS:
            continue  # rendering-only options (image, resources …) do not change a sim run
        at = Location(where.file, where.document, where.obj, f"{where.field}.{key}")
        if key == "testScale":
            if value not in TEST_SCALES:
                raise InputError(f"testScale {value!r} is not one of {', '.join(TEST_SCALES)}", at)
            got["test_scale"] = value
        elif key in ("nodesPerJob", "minGroupSize", "maxSteps", "maxRestarts"):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"{key} must be an integer of at least 1", at)
            snake = {
                "nodesPerJob": "nodes_per_job",
                "minGroupSize": "min_group_size",
                "maxSteps": "max_steps",
                "maxRestarts": "max_restarts",
            }[key]
            got[snake] = value
        elif key == "thresholds":
            if not isinstance(value, Mapping) or not all(
                isinstance(v, str) for v in value.values()
            ):
                raise InputError("thresholds must map a metric to a CEL expression string", at)
            got["thresholds"] = dict(value)
        elif key in ("enableMNNVL", "enableCheckpoint"):
            if not isinstance(value, bool):
                raise InputError(f"{key} must be true or false", at)
            got["enable_mnnvl" if key == "enableMNNVL" else "enable_checkpoint"] = value
        elif key == "maxBytes":
            got["max_bytes"] = _bytes(str(value), at)
    return Options(**{**base.__dict__, **got})


def _known(domain: str, variant: str) -> bool:
    return (
        (domain == "communication" and variant in COLLECTIVES)
        or (domain == "diagnostics" and variant in DCGM_LEVELS)
        or (domain == "training" and variant in TRAININGS)
    )


def from_mapping(doc: Mapping[str, Any], source: str = "") -> CertSpec:
    """A CertSpec from a Certification document; InputError naming the field otherwise."""
    meta = doc.get("metadata") or {}
    name = str(meta.get("name") or "certification")
    obj = f"Certification/{name}"
    spec = doc.get("spec")
    if doc.get("kind") != "Certification" or not isinstance(spec, Mapping):
        raise InputError("expected a Certification with a spec", Location(file=source or None))
    target = spec.get("target") or {}
    if not isinstance(target, Mapping):
        raise InputError("target must be a mapping", Location(source, None, obj, "spec.target"))
    base = _options(spec, Options(), Location(source or None, None, obj, "spec"))
    cats = spec.get("categories")
    if not isinstance(cats, list) or not 1 <= len(cats) <= 64:
        raise InputError(
            "categories must list 1 to 64 entries",
            Location(source or None, None, obj, "spec.categories"),
        )
    out: list[Category] = []
    for i, c in enumerate(cats):
        where = Location(source or None, None, obj, f"spec.categories[{i}]")
        if not isinstance(c, Mapping) or not c.get("domain") or not c.get("variant"):
            raise InputError("a category needs a domain and a variant", where)
        domain, variant = str(c["domain"]), str(c["variant"])
        if not _known(domain, variant):
            raise InputError(f"category {domain}/{variant} is not in the catalog", where)
        opts = c.get("options") or {}
        where = Location(where.file, None, obj, f"{where.field}.options")
        out.append(Category(domain, variant, _options(opts, base, where)))
    selector = target.get("nodeSelector") or {}
    names = target.get("nodeNames") or []
    return CertSpec(
        name, {str(k): str(v) for k, v in selector.items()}, tuple(map(str, names)), tuple(out)
    )
