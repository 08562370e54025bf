"""Reading and writing paths in plain Kubernetes mappings without creating structure by accident.

The post-resolve rewriters promise either to create nothing (image) or to create exactly the maps
they need (gang labels); these helpers make the difference explicit at each call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from glimmer.certify.platform.errors import PlatformError
from glimmer.certify.platform.vocab import TRAINING_RUNTIME

Obj = dict[str, Any]


def get_path(obj: Any, *keys: str) -> Any:
    """The value at ``keys`` under ``obj``, or None where any step is missing or not a map."""
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def ensure_map(obj: Obj, *keys: str) -> Obj:
    """The map at ``keys``, creating missing (or non-map) steps as empty maps."""
    for key in keys:
        child = obj.get(key)
        if not isinstance(child, dict):
            child = {}
            obj[key] = child
        obj = child
    return obj


def check_dependencies(deps: list[Any]) -> None:
    """Refuse a dependency that is not an object at all (the seed's unmarshal error)."""
    for i, dep in enumerate(deps):
        if not isinstance(dep, dict):
            raise PlatformError(f"unmarshal dependency {i}: not a Kubernetes object")


def training_runtime_jobs(dep: Any) -> Iterator[Obj]:
    """The replicated jobs (maps only) of a TrainingRuntime dependency; nothing for other kinds
    or shapes, which are skipped silently."""
    if not isinstance(dep, dict) or dep.get("kind") != TRAINING_RUNTIME:
        return
    jobs = get_path(dep, "spec", "template", "spec", "replicatedJobs")
    if not isinstance(jobs, list):
        return
    yield from (job for job in jobs if isinstance(job, dict))
