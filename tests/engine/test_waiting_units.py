"""The executions waiting for their unit's first result, kept by name and by unit."""

from __future__ import annotations

from glimmer.engine.waiting import WaitingUnits


def test_names_are_found_by_their_unit_and_leave_it_when_dropped() -> None:
    units = WaitingUnits()
    units.add("a-0", ("burn", "n1"))
    units.add("a-1", ("burn", "n1"))
    units.add("b-0", ("burn", "n2"))
    assert units.of(("burn", "n1")) == {"a-0", "a-1"} and units.of(("disk", "n1")) == set()
    units.drop("a-0")
    units.drop("a-1")
    units.drop("never-added")
    assert units.of(("burn", "n1")) == set() and set(units.unit) == {"b-0"}


def test_a_name_added_again_moves_to_its_new_unit() -> None:
    units = WaitingUnits()
    units.add("x", ("burn", "n1"))
    units.add("x", ("burn", "n2"))
    assert units.of(("burn", "n1")) == set() and units.of(("burn", "n2")) == {"x"}
