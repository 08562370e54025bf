"""Job-scoped dependency copies (specs/certify.md §3.4, simplified to what a render needs).

A dependency the job spec names (its TrainingRuntime, a ConfigMap the runtime mounts, ...) is
copied per Job under a suffixed name, so two Jobs, or the same category twice in one
Certification, never share one. Renaming rewrites every quoted occurrence of the name, which can
also hit a queue label named like the runtime, so the gang-scheduling fields are then restored
with :func:`~glimmer.certify.platform.preserve.preserve_scheduling_fields`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.certify.catalog.naming import NAME_MAX, truncate
from glimmer.certify.platform.preserve import preserve_scheduling_fields

Obj = dict[str, Any]


def _name(dep: Any) -> str:
    return str((dep.get("metadata") or {}).get("name", "")) if isinstance(dep, dict) else ""


def _mentions(text: str, name: str) -> bool:
    return json.dumps(name) in text


def job_scoped(deps: Sequence[Any], job_spec: Mapping[str, Any]) -> list[str]:
    """Names of the dependencies the job spec reaches, directly or through another one.
    Cluster-scoped kinds (``Cluster*``) are never job-scoped."""
    candidates = [d for d in deps if _name(d) and not str(d.get("kind", "")).startswith("Cluster")]
    reached: list[str] = []
    frontier = [json.dumps(job_spec)]
    while frontier:
        text = frontier.pop()
        for dep in candidates:
            name = _name(dep)
            if name not in reached and _mentions(text, name):
                reached.append(name)
                frontier.append(json.dumps(dep))
    return reached


def rename_job_scoped(
    deps: Sequence[Any], job_spec: Mapping[str, Any], suffix: str, gs: Mapping[str, Any] | None
) -> tuple[list[Any], Obj]:
    """The dependencies and job spec with every job-scoped name suffixed, scheduling fields kept."""
    names = job_scoped(deps, job_spec)
    mapping = {name: truncate(name + suffix, NAME_MAX) for name in names}

    def rename(text: str) -> str:
        for old, new in mapping.items():
            text = text.replace(json.dumps(old), json.dumps(new))
        return text

    out: list[Any] = []
    for dep in deps:
        original = json.dumps(dep)
        renamed = rename(original)
        kept = preserve_scheduling_fields(original.encode(), renamed.encode(), gs)
        out.append(json.loads(kept))
    spec: Obj = json.loads(rename(json.dumps(job_spec)))
    return out, spec
