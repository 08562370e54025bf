"""The base models every resource part derives from, and the small field types they share.

Two kinds of model live on the wire:

* :class:`Wire` — our own schema. Unknown fields are errors, names are camelCase on the wire and
  snake_case in Python (both accepted on input).
* :class:`Carried` — a Kubernetes type we carry verbatim (env, tolerations, resources...). We name
  the fields we read and keep every other key as it came, so nothing a newer cluster adds is lost.

Both drop an explicit ``null`` on a field that cannot hold one, the way the API server prunes it
before defaulting: ``repeatCount: null`` reads as "not set", never as an error or a zero.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

# Marks a field whose default is only the Go zero value ("not set"), not a documented default:
# the CRD generator leaves `default` out of its schema so the API server does not stamp it.
ZERO_DEFAULT_MARK = "x-glimmer-zero-default"
ZERO: dict[str, Any] = {ZERO_DEFAULT_MARK: True}

# Carries a sub-path (such as "[1].mountPath") from a list validator to the error translator, so
# an error about one item names that item's field rather than the whole list.
SUBPATH_CTX = "subpath"


def _nullable(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Union or origin is types.UnionType:
        return type(None) in get_args(annotation)
    return annotation is Any or annotation is None


def _not_nullable(model: type[BaseModel]) -> frozenset[str]:
    """The names and aliases of ``model``'s fields that cannot hold None, computed once per model
    class (a model's fields are fixed when it is made; this ran on every validation, 3 % of a
    4,096-node run)."""
    known = _NOT_NULLABLE.get(model)
    if known is None:
        names: set[str] = set()
        for name, info in model.model_fields.items():
            if not _nullable(info.annotation):
                names.add(name)
                if info.alias:
                    names.add(info.alias)
        known = _NOT_NULLABLE[model] = frozenset(names)
    return known


_NOT_NULLABLE: dict[type[BaseModel], frozenset[str]] = {}


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    @model_validator(mode="before")
    @classmethod
    def _prune_nulls(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        not_nullable = _not_nullable(cls)
        if not any(v is None and k in not_nullable for k, v in data.items()):
            return data
        return {k: v for k, v in data.items() if not (v is None and k in not_nullable)}


class Wire(_Model):
    """A part of our own schema: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class Carried(_Model):
    """A Kubernetes type carried verbatim: named fields are typed, other keys are kept."""

    model_config = ConfigDict(extra="allow")


def item_error(subpath: str, message: str) -> PydanticCustomError:
    """An error about one part of a list or map, located at ``<field><subpath>``."""
    return PydanticCustomError("glimmer_item", message, {SUBPATH_CTX: subpath})


def _int_range(bits: int) -> AfterValidator:
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"{value} does not fit a {bits}-bit integer")
        return value

    return AfterValidator(check)


# Kubernetes integers: strict (the string "5" is not 5, as the API server would also refuse it),
# with their width checked and stated in the schema.
Int32 = Annotated[int, Strict(), _int_range(32), Field(json_schema_extra={"format": "int32"})]
Int64 = Annotated[int, Strict(), _int_range(64), Field(json_schema_extra={"format": "int64"})]
Bool = Annotated[bool, Strict()]
