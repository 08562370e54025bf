"""A model copied with changes, exactly as pydantic's ``model_copy(update=...)`` makes it,
without its general path.

The engine replaces results and attempts whole (:mod:`.book`): a unit's result and attempt are
copied with changes about four times over its life, and the status once per write. Pydantic's
copy calls ``copy.copy`` three times and looks for deep copies, extra fields and private
attributes on every call. For a model with neither extras nor private attributes (the engine's
:class:`~glimmer.api.base.Wire` models forbid extras and declare none) the copy is its values
with the changes, and its set of given names with the changed ones: a third less work. Any
other model takes ``model_copy`` itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__


def copied(model: M, update: Mapping[str, object]) -> M:
    """``model.model_copy(update=update)``: a shallow copy with ``update``'s values, which are
    not validated, and their names added to the fields set."""
    cls = type(model)
    if (
        model.__pydantic_extra__ is not None
        or model.__pydantic_private__ is not None
        or cls.model_config.get("extra") == "allow"
    ):
        return model.model_copy(update=dict(update))
    new = cls.__new__(cls)
    values = model.__dict__.copy()
    values.update(update)
    names = set(model.__pydantic_fields_set__)  # a plain set even of a shared one
    names.update(update)
    _set(new, "__dict__", values)
    _set(new, "__pydantic_extra__", None)
    _set(new, "__pydantic_fields_set__", names)
    _set(new, "__pydantic_private__", None)
    return new
