"""Finding a fleet by built-in name or file path, and building its topology."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from glimmer.api.budget import read_text
from glimmer.api.fleet_load import LoadedFleet, load_fleet_text
from glimmer.errors import InputError
from glimmer.fleet.build import build
from glimmer.fleet.topology import Topology

_SUFFIXES = (".yaml", ".yml", ".json")


def _builtin_dir() -> Traversable:
    return resources.files("glimmer.data").joinpath("fleets")


def builtin_names() -> list[str]:
    """Names of the fleets shipped with glimmer (``ai-factory``, ``hgx-1k`` …)."""
    return sorted(
        f.name.rsplit(".", 1)[0] for f in _builtin_dir().iterdir() if f.name.endswith(".yaml")
    )


def read_fleet(ref: str) -> LoadedFleet:
    """Read and validate a Fleet given a built-in name or a path to a YAML/JSON file."""
    path = Path(ref)
    if path.suffix in _SUFFIXES or path.exists():
        # Refused before reading when over the Fleet budget; a binary file is bad input.
        return load_fleet_text(read_text(path, "fleet", ref), ref)
    item = _builtin_dir().joinpath(f"{ref}.yaml")
    if not item.is_file():
        known = ", ".join(builtin_names())
        raise InputError(f"no built-in fleet {ref!r} and no such file (built-in: {known})")
    return load_fleet_text(item.read_text(encoding="utf-8"), f"builtin:{ref}")


def topology_of(loaded: LoadedFleet) -> Topology:
    """Build the topology of an already-read fleet, errors pointing into its file."""
    return build(loaded.fleet, loaded.source, loaded.lines, loaded.document)


def load_topology(ref: str) -> Topology:
    """Read, validate and build: a built-in name or a file path -> :class:`Topology`."""
    return topology_of(read_fleet(ref))
