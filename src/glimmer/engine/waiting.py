"""The executions that wait for their unit's first result, by name and by unit.

An execution the engine created (or saw live) while its unit had no result is "unrecorded"
until a pass records it (:func:`glimmer.engine.execute.unrecorded_after`). A pass needs to look
again only at those whose unit it touched, so the engine keeps them by unit as well as by name:
finding them costs the units touched, not every execution waiting (at a cap of 1,024 a few
hundred wait for their first pass, and every pass walked them all: a third of what cap 1,024
cost over cap 64).
"""

from __future__ import annotations

Unit = tuple[str, str]  # (test, first node of the unit)


class WaitingUnits:
    """Names and their units, both ways."""

    def __init__(self) -> None:
        self.unit: dict[str, Unit] = {}
        self._names: dict[Unit, set[str]] = {}

    def add(self, name: str, unit: Unit) -> None:
        self.drop(name)
        self.unit[name] = unit
        self._names.setdefault(unit, set()).add(name)

    def drop(self, name: str) -> None:
        unit = self.unit.pop(name, None)
        if unit is None:
            return
        names = self._names[unit]
        names.discard(name)
        if not names:
            del self._names[unit]

    def of(self, unit: Unit) -> set[str]:
        """The names waiting in ``unit`` (empty when none)."""
        return self._names.get(unit, set())
