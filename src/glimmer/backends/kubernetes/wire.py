"""What a resource looks like on its way to the API server: plain JSON with no ``null``.

A model field left None means "not set", and the CRDs type those fields as arrays, objects or
strings that may be absent but never ``null``: a real API server refuses such a write (422
Invalid, the field named), and one that accepted it would store a value no reader expects.
``glimmer run -o json`` prints every set field as it is, nulls included (551 of them for a
small run, today); what is sent to a cluster goes through :func:`for_cluster` instead, which
drops every None at any depth. A status is always sent whole (the status subresource is
replaced, never merged), so a field dropped here is absent on the server too, not a stale
value left behind.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def drop_none(value: Any) -> Any:
    """``value`` with every None removed: None mapping values are dropped, None list items
    too (a list of objects never means "nothing here" by a null)."""
    if isinstance(value, dict):
        return {k: drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none(v) for v in value if v is not None]
    return value


def for_cluster(obj: BaseModel) -> dict[str, Any]:
    """``obj`` as the JSON body of a write: wire (camelCase) names, the fields that were set,
    and no None anywhere."""
    data = obj.model_dump(mode="json", by_alias=True, exclude_unset=True)
    cleaned: dict[str, Any] = drop_none(data)
    return cleaned
