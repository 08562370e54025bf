"""Job-scoped dependency copies (specs/certify.md §3.4).

A dependency the job spec names (its TrainingRuntime, a ConfigMap the runtime mounts, ...), and
one sharing a reference with such a dependency (the ComputeDomain whose channel the runtime
claims), is copied per Job under a suffixed name, so two Jobs, or the same category twice in one
Certification, never share one; the references they share are suffixed with them. Renaming
rewrites every quoted occurrence of the name, which can also hit a queue label named like the
runtime, so the gang-scheduling fields are then restored with
:func:`~glimmer.certify.platform.preserve.preserve_scheduling_fields`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.api.meta import object_name_problem
from glimmer.certify.catalog.naming import NAME_MAX, truncate
from glimmer.certify.platform.preserve import preserve_scheduling_fields

Obj = dict[str, Any]


def _name(dep: Any) -> str:
    return str((dep.get("metadata") or {}).get("name", "")) if isinstance(dep, dict) else ""


def _mentions(text: str, name: str) -> bool:
    return json.dumps(name) in text


# Where a dependency names another namespaced object the workload owns (§3.4 rule (b), the
# cross-refs): a field whose key is one of these, or a ``name`` under one of the objects. Only
# these, not every name-shaped string: a shared ``schedulerName``, ``storageClassName`` or
# ``deviceClassName`` names something the cluster provides, and a container or replicatedJob
# name is structural; suffixing either would break the workload.
REFERENCE_KEYS = frozenset(
    {"resourceClaimTemplateName", "resourceClaimName", "claimName", "secretName", "configMapName"}
)
REFERENCE_OBJECTS = frozenset(
    {
        "resourceClaimTemplate",
        "configMap",
        "configMapRef",
        "configMapKeyRef",
        "secret",
        "secretRef",
        "secretKeyRef",
        "persistentVolumeClaim",
    }
)


def references(node: Any, key: str = "") -> set[str]:
    """The object names ``node`` holds in reference fields (metadata skipped: labels,
    annotations and an object's own name are no reference)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "metadata":
                continue
            if isinstance(v, str) and object_name_problem(v) is None:
                if k in REFERENCE_KEYS or (k == "name" and key in REFERENCE_OBJECTS):
                    found.add(v)
            else:
                found |= references(v, k)
    elif isinstance(node, list):
        for item in node:
            found |= references(item, key)
    return found


def job_scoped(deps: Sequence[Any], job_spec: Mapping[str, Any]) -> list[str]:
    """Names of the dependencies copied per Job, in the catalog's order: those the job spec
    reaches, directly or through another one (a), and those sharing a reference with a reached
    one that is no dependency's name (b: a ComputeDomain whose channel template the runtime
    claims). Cluster-scoped kinds (``Cluster*``) are never job-scoped."""
    candidates = [d for d in deps if _name(d) and not str(d.get("kind", "")).startswith("Cluster")]
    names = {_name(d) for d in deps}
    refs = {_name(d): references(d) - names for d in candidates}
    reached: set[str] = set()
    frontier: list[Any] = [job_spec]
    shared: set[str] = references(job_spec) - names
    while frontier:
        text = json.dumps(frontier.pop())
        for dep in candidates:
            name = _name(dep)
            if name not in reached and (_mentions(text, name) or refs[name] & shared):
                reached.add(name)
                shared |= refs[name]
                frontier.append(dep)
    return [_name(d) for d in candidates if _name(d) in reached]


def cross_references(deps: Sequence[Any], scoped: Sequence[str]) -> list[str]:
    """The references two or more job-scoped dependencies share that are no dependency's name
    (the channel template a ComputeDomain makes and the runtime claims): suffixed with them, so
    each Job's copies point at each other."""
    names = {_name(d) for d in deps}
    counts: dict[str, int] = {}
    for dep in deps:
        if _name(dep) in scoped:
            for ref in references(dep) - names:
                counts[ref] = counts.get(ref, 0) + 1
    return sorted(ref for ref, n in counts.items() if n >= 2)


def rename_job_scoped(
    deps: Sequence[Any], job_spec: Mapping[str, Any], suffix: str, gs: Mapping[str, Any] | None
) -> tuple[list[Any], Obj]:
    """The dependencies and job spec with every job-scoped name suffixed, scheduling fields kept."""
    names = job_scoped(deps, job_spec)
    renamed_refs = [*names, *cross_references(deps, names)]
    mapping = {name: truncate(name + suffix, NAME_MAX) for name in renamed_refs}

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
