"""Catalog entries: one data file per category under ``data/entries/<domain>/<variant>.yaml``.

An entry may ``extends`` a shared fragment under ``data/lib/``; the entry is merged onto the
fragment with the dependency merge of specs/certify.md §5.4 (maps merge, named lists merge by
name, anything else replaces), so a variant states only what differs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import yaml

import glimmer.api.certify.kinds  # noqa: F401  (registers LogProfile with the loader)
from glimmer.api.certify.catalog import CatalogView, register_catalog
from glimmer.api.certify.logprofile import LogProfile
from glimmer.api.certify.threshold import MEASUREMENT_KEYS
from glimmer.api.load import load_text
from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.merge import merge_dependency
from glimmer.certify.platform.vocab import FRAMEWORKS

DATA = "data"
_KEYS = {
    "description", "framework", "image", "perNode", "minGPUs", "timeoutPerJob", "parallelism",
    "values", "runtime", "dependencies", "jobTemplate", "orchestration", "overrides",
    "trainingResources", "checkpoint", "extends",
}  # fmt: skip


@dataclass(frozen=True)
class Entry:
    """One catalog category and its (merged) data."""

    domain: str
    variant: str
    data: dict[str, Any] = field(repr=False)

    @property
    def ref(self) -> str:
        """``domain/variant``."""
        return f"{self.domain}/{self.variant}"

    @property
    def framework(self) -> str:
        """torch, mpi or exec."""
        return str(self.data["framework"])

    @property
    def per_node(self) -> bool:
        """Whether the category runs one single-node job per node (diagnostics)."""
        return bool(self.data.get("perNode", False))

    @property
    def min_gpus(self) -> int:
        """GPUs a job needs at least."""
        return int(self.data.get("minGPUs", 1))

    @property
    def timeout_per_job(self) -> str:
        """The entry's per-job timeout."""
        return str(self.data.get("timeoutPerJob", "1h"))

    def parallelism(self, arch: str) -> dict[str, int]:
        """Tensor, pipeline and expert parallelism (tp, pp, ep) for an architecture."""
        table = self.data.get("parallelism") or {}
        return {"tp": 1, "pp": 1, "ep": 1, **table.get("default", {}), **table.get(arch, {})}


def _root() -> Traversable:
    return resources.files("glimmer.certify.catalog").joinpath(DATA)


def _read(path: Traversable, where: str) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise PlatformError(f"catalog {where}: not valid YAML: {e}") from None


def _load(domain: str, variant: str, path: Traversable) -> Entry:
    where = f"{domain}/{variant}"
    data = _read(path, where)
    if not isinstance(data, dict):
        raise PlatformError(f"catalog {where}: an entry is a mapping")
    unknown = set(data) - _KEYS
    if unknown:
        raise PlatformError(f"catalog {where}: unknown keys {sorted(unknown)}")
    base = data.pop("extends", None)
    if base is not None:
        data = merge_dependency(_read(_root().joinpath("lib", f"{base}.yaml"), where), data)
    if data.get("framework") not in FRAMEWORKS:
        raise PlatformError(f"catalog {where}: framework must be one of {', '.join(FRAMEWORKS)}")
    return Entry(domain, variant, data)


@cache
def catalog() -> dict[str, Entry]:
    """Every entry by ``domain/variant``, sorted by domain then variant."""
    found: dict[str, Entry] = {}
    entries = _root().joinpath("entries")
    for domain in sorted(entries.iterdir(), key=lambda p: p.name):
        if not domain.is_dir():
            continue
        for path in sorted(domain.iterdir(), key=lambda p: p.name):
            if path.name.endswith(".yaml"):
                variant = path.name.removesuffix(".yaml")
                entry = _load(domain.name, variant, path)
                found[entry.ref] = entry
    return found


def list_entries() -> list[Entry]:
    """Every entry, sorted by domain then variant."""
    return list(catalog().values())


def get_entry(domain: str, variant: str) -> Entry:
    """One entry; an error naming the known ones when it does not exist."""
    entry = catalog().get(f"{domain}/{variant}")
    if entry is None:
        known = ", ".join(catalog())
        raise PlatformError(f"category {domain}/{variant} is not in the catalog (known: {known})")
    return entry


def find_entry(name: str) -> Entry:
    """An entry by ``domain/variant``, or by its variant alone when that names exactly one."""
    if "/" in name:
        domain, _, variant = name.partition("/")
        return get_entry(domain, variant)
    found = [e for e in catalog().values() if e.variant == name]
    if len(found) != 1:
        known = ", ".join(catalog())
        raise PlatformError(f"category {name!r} is not in the catalog (known: {known})")
    return found[0]


def log_profiles() -> list[Traversable]:
    """The built-in LogProfile files the catalog's measurements reference."""
    folder = _root().joinpath("logprofiles")
    return sorted((p for p in folder.iterdir() if p.name.endswith(".yaml")), key=lambda p: p.name)


@cache
def builtin_log_profiles() -> dict[str, LogProfile]:
    """The built-in LogProfiles by name."""
    found: dict[str, LogProfile] = {}
    for path in log_profiles():
        for item in load_text(path.read_text(encoding="utf-8"), f"logprofiles/{path.name}"):
            if isinstance(item.obj, LogProfile):
                found[item.name] = item.obj
    return found


def log_profile(name: str) -> LogProfile:
    """A built-in LogProfile by name (PlatformError naming the known ones otherwise)."""
    found = builtin_log_profiles()
    if name not in found:
        raise PlatformError(
            f"LogProfile {name!r} is not built in (known: {', '.join(sorted(found))})"
        )
    return found[name]


def measurement_profile(entry: Entry, measurement: str) -> str:
    """The logProfileRef of an entry's ``bandwidthMeasurement`` or ``goodputMeasurement``; ""
    when the entry has no such measurement."""
    spec = (entry.data.get("jobTemplate") or {}).get("spec") or {}
    return str((spec.get(measurement) or {}).get("logProfileRef") or "")


def platform_overrides(platform: str) -> list[dict[str, Any]]:
    """The overrides every platform gets (``_all.yaml``), then the platform's own, each guarded
    by its platform."""
    out: list[dict[str, Any]] = []
    folder = _root().joinpath("platforms")
    for name, guard in (("_all", None), (platform, platform)):
        path = folder.joinpath(f"{name}.yaml")
        if not path.is_file():
            continue
        for item in _read(path, f"platforms/{name}") or []:
            when = dict(item.get("when") or {})
            if guard is not None:
                when["platform"] = {"equals": guard}
            out.append({**item, "when": when})
    return out


def measured_keys(entry: Entry) -> frozenset[str]:
    """The threshold keys the measurements of an entry's Jobs produce (§7.5)."""
    spec = (entry.data.get("jobTemplate") or {}).get("spec") or {}
    keys: frozenset[str] = frozenset()
    for measurement, produced in MEASUREMENT_KEYS.items():
        if spec.get(measurement):
            keys |= produced
    return keys


@cache
def catalog_view() -> CatalogView:
    """Every entry's ``domain/variant`` with the threshold keys it measures."""
    return {ref: measured_keys(entry) for ref, entry in catalog().items()}


# Certification files are checked against the catalog as they load
# (glimmer.api.certify.certification).
register_catalog(catalog_view)
