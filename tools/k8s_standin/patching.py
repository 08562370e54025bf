"""The patch flavours of a PATCH request, applied to the stored object (never changing it).

JSON merge patch (RFC 7386) is the base. A strategic merge patch (built-in kinds only; a custom
resource answers 415, as a real API server does) merges the lists the API declares keyed —
containers, env, volumes, ports, conditions... — element by element on their merge key, honours
``$patch: delete`` in such a list, and drops the ``$setElementOrder``/``$retainKeys``
directives kubectl sends; any other list is replaced. Server-side apply merges its body as a
merge patch and creates a missing object (no field ownership). A JSON patch (RFC 6902) whose
``test`` fails, or which points at a missing path, is refused with 422 as a real API server
does — kopf depends on that for its finalizers.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import jsonpatch
import jsonpointer

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
PATCH_TYPES = frozenset({MERGE, STRATEGIC, JSON_PATCH, APPLY})


class PatchError(ValueError):
    """A patch that cannot apply: the API server answers 422 Invalid."""


def merge(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, ``null`` removes, anything else replaces."""
    if not isinstance(patch, Mapping):
        return patch  # the request's own data: nothing else holds it
    out: dict[str, Any] = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge(out.get(key), value)
    return out


# The lists core/v1 declares with patchStrategy "merge", by field name, and their merge key.
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "conditions": "type",
    "taints": "key",
    "addresses": "type",
    "hostAliases": "ip",
    "ownerReferences": "uid",
}


def strategic(target: Any, patch: Any) -> Any:
    """A strategic merge patch: ``merge`` with keyed lists merged element by element."""
    if not isinstance(patch, Mapping):
        return patch
    out: dict[str, Any] = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue  # $setElementOrder/..., $retainKeys, $patch: ordering and hints only
        if value is None:
            out.pop(key, None)
        elif isinstance(value, list) and key in MERGE_KEYS and isinstance(out.get(key), list):
            out[key] = _merge_list(out[key], value, MERGE_KEYS[key])
        else:
            out[key] = strategic(out.get(key), value)
    return out


def _merge_list(current: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    merged = list(current)
    for item in patch:
        if not isinstance(item, Mapping) or merge_key not in item:
            return [i for i in patch if not (isinstance(i, Mapping) and i.get("$patch"))]
        at = next(
            (
                i
                for i, old in enumerate(merged)
                if isinstance(old, Mapping) and old.get(merge_key) == item[merge_key]
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if at is not None:
                del merged[at]
        elif at is None:
            merged.append(strategic({}, item))
        else:
            merged[at] = strategic(merged[at], item)
    return merged


def json_patch(target: Mapping[str, Any], ops: Any) -> dict[str, Any]:
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    try:
        result = jsonpatch.JsonPatch(ops).apply(copy.deepcopy(dict(target)))
    except jsonpatch.JsonPatchTestFailed as exc:
        raise PatchError(
            f"the server rejected our request due to an error in our request: {exc}"
        ) from exc
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError) as exc:
        raise PatchError(
            f"the server rejected our request due to an error in our request: {exc}"
        ) from exc
    if not isinstance(result, dict):
        raise PatchError("a JSON patch must leave an object")
    return result


def apply_patch(content_type: str, target: Mapping[str, Any], body: Any) -> dict[str, Any]:
    """The object ``target`` becomes under a PATCH of ``content_type`` with ``body``."""
    if content_type == JSON_PATCH:
        return json_patch(target, body)
    if not isinstance(body, Mapping):
        raise PatchError("a merge patch must be an object")
    result = strategic(target, body) if content_type == STRATEGIC else merge(target, body)
    assert isinstance(result, dict)
    return result
