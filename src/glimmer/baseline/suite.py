"""A profile with the tests it names: its planned tests, and a thresholdless copy of it.

Results are identified by planned test name, so a derived gate lands where the planner would
take it from: a plain entry's gates go into its test (the BurnInTest of a ``testRef``, or the
``inline`` spec), a variant cell's into the cell, whose list replaces its parent's (the
overlay rule). The naming mirrors :mod:`glimmer.plan.variants`: an entry is named after its
test (or ``inline-<index>-<kind>``), a cell ``<entry>-<cell>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from glimmer.api.profile import BurnInProfile, TestVariant
from glimmer.api.test import BurnInTestSpec
from glimmer.api.threshold import Threshold
from glimmer.errors import InputError, Location


@dataclass(frozen=True)
class Suite:
    """A profile and the specs of the tests its ``testRef`` entries name."""

    profile: BurnInProfile
    tests: Mapping[str, BurnInTestSpec]


@dataclass(frozen=True)
class Planned:
    """One planned test: its result name, where it sits in the profile, and its gates as the
    profile would run them (a cell's replacement list, or its entry's)."""

    name: str
    entry: int
    cell: int | None
    kind: str
    gates: tuple[Threshold, ...]


def _entry_spec(suite: Suite, index: int) -> BurnInTestSpec:
    entry = suite.profile.spec.tests[index]
    if entry.inline is not None:
        return entry.inline
    assert entry.test_ref is not None  # validation: exactly one of testRef and inline
    spec = suite.tests.get(entry.test_ref)
    if spec is None:
        raise InputError(
            f"profile entry {index} names test {entry.test_ref!r}, which is neither in the files "
            "given nor built in",
            Location(obj=f"BurnInProfile/{suite.profile.name}", field=f"spec.tests[{index}]"),
        )
    return spec


def planned_tests(suite: Suite) -> list[Planned]:
    """Every planned test of the suite, in profile order (cells in cell order)."""
    out: list[Planned] = []
    for index, entry in enumerate(suite.profile.spec.tests):
        spec = _entry_spec(suite, index)
        name = entry.entry_name(index)
        if not entry.variants:
            out.append(Planned(name, index, None, spec.kind, tuple(spec.thresholds or ())))
            continue
        for c, cell in enumerate(entry.variants):
            gates = cell.thresholds if cell.thresholds is not None else spec.thresholds
            out.append(Planned(f"{name}-{cell.name}", index, c, spec.kind, tuple(gates or ())))
    return out


def thresholdless(suite: Suite) -> Suite:
    """A copy of the suite with every gate removed (tests, inline entries and cells), fit for a
    baseline run, which refuses any gate. Tests the profile does not name are left out."""
    profile = suite.profile.model_copy(deep=True)
    tests: dict[str, BurnInTestSpec] = {}
    for index, entry in enumerate(profile.spec.tests):
        if entry.inline is not None:
            _ungated(entry.inline)
        else:
            spec = _entry_spec(suite, index).model_copy(deep=True)
            _ungated(spec)
            assert entry.test_ref is not None
            tests[entry.test_ref] = spec
        for cell in entry.variants or ():
            _ungated(cell)
    return Suite(profile, tests)


def _ungated(model: BurnInTestSpec | TestVariant) -> None:
    model.thresholds = None
    # Unset, not null: written back out, the field is simply absent, as if never written.
    model.model_fields_set.discard("thresholds")
