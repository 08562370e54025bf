"""Merge semantics of overrides (specs/certify.md §5.4), as pure functions over mappings.

* ``strategic_merge``: the job template patch. Maps merge recursively and ``null`` deletes. A
  list merges by key only where the Kubernetes type declares a patch-merge key (the corev1 lists
  in :data:`MERGE_KEYS`); Trainer's lists (trainer args, trainer env) and every other list are
  replaced wholesale.
* ``merge_dependency``: a dependency patch. Maps merge, ``null`` deletes, and a list of objects
  that all carry a non-empty ``name`` merges by name; anything else replaces.
* ``json_patch``: RFC 6902 add/remove/replace/test, applied after the strategic merge.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from glimmer.certify.platform.errors import PlatformError
from glimmer.errors import Location

Obj = dict[str, Any]

# Rules as data: list fields with a patchMergeKey on their corev1 type.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "env": "name",
    "imagePullSecrets": "name",
    "ports": "containerPort",
}
# Maps whose lists belong to a Trainer type with no patch-merge keys: replaced wholesale.
ATOMIC_PARENTS: frozenset[str] = frozenset({"trainer"})


def _keyed(items: list[Any], key: str) -> bool:
    return all(isinstance(i, dict) and isinstance(i.get(key), str | int) for i in items)


def _merge_keyed(
    base: list[Any], patch: list[Any], key: str, merge: Callable[[Any, Any], Any]
) -> list[Any]:
    out = [copy.deepcopy(item) for item in base]
    index = {item.get(key): i for i, item in enumerate(out) if isinstance(item, dict)}
    for item in patch:
        k = item.get(key) if isinstance(item, dict) else None
        if k is not None and k in index:
            out[index[k]] = merge(out[index[k]], item)
        else:
            out.append(copy.deepcopy(item))
    return out


def _under(parent: str) -> Callable[[Any, Any], Any]:
    def merge(base: Any, patch: Any) -> Any:
        return strategic_merge(base, patch, parent)

    return merge


def strategic_merge(base: Any, patch: Any, parent: str = "") -> Any:
    """``base`` with ``patch`` applied as a Kubernetes strategic merge patch."""
    if not isinstance(patch, Mapping) or not isinstance(base, Mapping):
        return copy.deepcopy(patch)
    out: Obj = copy.deepcopy(dict(base))
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = strategic_merge(out[key], value, key)
        elif (
            isinstance(value, list)
            and isinstance(out.get(key), list)
            and key in MERGE_KEYS
            and parent not in ATOMIC_PARENTS
            and _keyed(value, MERGE_KEYS[key])
            and _keyed(out[key], MERGE_KEYS[key])
        ):
            out[key] = _merge_keyed(out[key], value, MERGE_KEYS[key], _under(key))
        else:
            out[key] = copy.deepcopy(value)
    return out


def _named_objects(items: list[Any]) -> bool:
    return bool(items) and all(
        isinstance(i, dict) and isinstance(i.get("name"), str) and i["name"] for i in items
    )


def merge_dependency(base: Any, patch: Any) -> Any:
    """``base`` with ``patch`` merged: maps recursively, ``null`` deletes, lists of named
    objects by name (base order kept, new names appended), anything else replaced."""
    if not isinstance(patch, Mapping) or not isinstance(base, Mapping):
        return copy.deepcopy(patch)
    out: Obj = copy.deepcopy(dict(base))
    for key, value in patch.items():
        current = out.get(key)
        if value is None:
            out.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(current, Mapping):
            out[key] = merge_dependency(current, value)
        elif (
            isinstance(value, list)
            and isinstance(current, list)
            and _named_objects(value)
            and _named_objects(current)
        ):
            out[key] = _merge_keyed(current, value, "name", merge_dependency)
        else:
            out[key] = copy.deepcopy(value)
    return out


def dependency_identity(dep: Mapping[str, Any]) -> tuple[Any, Any, Any]:
    """(apiVersion, kind, metadata.name): how a dependency patch finds its target."""
    return (dep.get("apiVersion"), dep.get("kind"), (dep.get("metadata") or {}).get("name"))


def apply_dependency_patches(deps: Sequence[Any], patches: Sequence[Any]) -> list[Any]:
    """Each patch merged into the dependency of the same identity, or appended when none."""
    out = [copy.deepcopy(d) for d in deps]
    for patch in patches:
        target = next(
            (
                i
                for i, d in enumerate(out)
                if isinstance(d, dict) and dependency_identity(d) == dependency_identity(patch)
            ),
            None,
        )
        if target is None:
            out.append(copy.deepcopy(patch))
        else:
            out[target] = merge_dependency(out[target], patch)
    return out


def _pointer(path: str, field: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PlatformError(f"path {path!r} must start with '/'", Location(field=f"{field}.path"))
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str]) -> Any:
    for part in parts[:-1]:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def json_patch(doc: Any, ops: Sequence[Mapping[str, Any]]) -> Any:
    """``doc`` with RFC 6902 operations (add, remove, replace, test) applied in order."""
    out = copy.deepcopy(doc)
    for index, op in enumerate(ops):
        # Errors name the operation (``jobTemplatePatch[i]``) relative to the override.
        field = f"jobTemplatePatch[{index}]"
        kind, parts = op.get("op"), _pointer(str(op.get("path", "")), field)
        try:
            parent = _parent(out, parts)
            last = parts[-1]
            if kind == "add":
                if isinstance(parent, list):
                    parent.insert(
                        len(parent) if last == "-" else int(last), copy.deepcopy(op["value"])
                    )
                else:
                    parent[last] = copy.deepcopy(op["value"])
            elif kind == "remove":
                del parent[int(last) if isinstance(parent, list) else last]
            elif kind == "replace":
                key = int(last) if isinstance(parent, list) else last
                _ = parent[key]  # replace needs an existing target
                parent[key] = copy.deepcopy(op["value"])
            elif kind == "test":
                if parent[int(last) if isinstance(parent, list) else last] != op.get("value"):
                    raise PlatformError(
                        f"test failed at {op.get('path')}", Location(field=f"{field}.value")
                    )
            else:
                raise PlatformError(f"unsupported op {kind!r}", Location(field=f"{field}.op"))
        except (KeyError, IndexError, ValueError, TypeError):
            raise PlatformError(
                f"{kind} {op.get('path')!r}: no such location", Location(field=f"{field}.path")
            ) from None
    return out
