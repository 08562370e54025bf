"""One set of "fields set" per distinct set of names, shared by the models that have it.

Every pydantic model carries the names of the fields it was given (``__pydantic_fields_set__``,
what ``exclude_unset`` dumps read). It is a set of its own per model, and a set of 5 to 18
names costs 728 bytes, one of 19 or more 2,264: more than the model's values. A 16,384-node run
keeps two models per unit (a result and its attempt), each with such a set: about 460 MB of
sets that hold the same few dozen combinations of names.

:func:`share_fields_set` replaces a model's set with the one shared copy of the same names. The
shared copy refuses to change (a model that is then given a field it lacked would change every
model sharing it), and copying it gives a plain set: ``model_copy(update=...)`` copies the set
before adding the updated names, so a copy is free to grow. Only for models treated as
immutable (the engine's results, :mod:`glimmer.engine.book`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NoReturn

from pydantic import BaseModel


class SharedFieldsSet(set[str]):
    """A fields set that many models hold: unchangeable; its copies are plain sets."""

    # set.copy makes a plain set even of a subclass (and in C: model_copy calls it per copy).
    __copy__ = set.copy

    def _refuse(self, *args: Any) -> NoReturn:
        raise TypeError(
            "a shared fields set cannot change: the model is treated as immutable "
            "(make a new one with model_copy)"
        )

    def add(self, name: str) -> None:
        if name not in self:  # pydantic adds on every assignment; one already there is no change
            self._refuse()

    def update(self, *others: Iterable[Any]) -> None:
        if any(name not in self for other in others for name in other):
            self._refuse()

    discard = remove = pop = clear = _refuse
    difference_update = intersection_update = symmetric_difference_update = _refuse
    __ior__ = __iand__ = __isub__ = __ixor__ = _refuse


_shared: dict[frozenset[str], SharedFieldsSet] = {}
# Distinct combinations are few (tens); past this bound a model keeps its own set.
_MAX_SHARED = 4096


def share_fields_set(model: BaseModel) -> None:
    """Give ``model`` the shared fields set of its names (a no-op when it already has one)."""
    current = model.__pydantic_fields_set__
    if type(current) is SharedFieldsSet:
        return
    key = frozenset(current)
    shared = _shared.get(key)
    if shared is None:
        if len(_shared) >= _MAX_SHARED:
            return
        shared = _shared[key] = SharedFieldsSet(key)
    object.__setattr__(model, "__pydantic_fields_set__", shared)
