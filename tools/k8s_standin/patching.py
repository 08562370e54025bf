"""The patch flavours of a PATCH request, applied to a copy of the stored object.

JSON merge patch (RFC 7386) is the base; strategic merge patch is treated as a merge patch
(lists are replaced, not merged by key — do not rely on keyed list merges against the
stand-in); server-side apply merges its body the same way and creates a missing object (no
field ownership). A JSON patch (RFC 6902) whose ``test`` fails, or which points at a missing
path, is refused with 422 as a real API server does — kopf depends on that for its finalizers.
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
    result = merge(target, body)
    assert isinstance(result, dict)
    return result
