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
from glimmer.contract.gpu_class import AXIS as GPU_CLASS_AXIS
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


def _selects_only_gates(cells: list[TestVariant]) -> bool:
    """The cells differ only in which GPU class they judge and the gates they judge it by."""
    return all(
        set(cell.axes or {}) == {GPU_CLASS_AXIS}
        and cell.model_fields_set <= {"name", "axes", "thresholds"}
        for cell in cells
    )


def without_gpu_class_matrices(suite: Suite) -> tuple[Suite, list[str]]:
    """The suite with each per-product (gpuClass) matrix run as its parent test, and a note per
    matrix. Such a matrix only chooses which gates judge a node; a baseline measures without
    gates and ``derive`` splits the samples by GPU product itself, so its cells would only add
    results that Skip."""
    profile = suite.profile.model_copy(deep=True)
    notes = []
    for index, entry in enumerate(profile.spec.tests):
        if entry.variants and _selects_only_gates(entry.variants):
            notes.append(
                f"{entry.entry_name(index)}: its {GPU_CLASS_AXIS} cells "
                f"({', '.join(c.name for c in entry.variants)}) ran as the one test; the "
                "samples are split by GPU product instead"
            )
            entry.variants = None
            entry.model_fields_set.discard("variants")
    return Suite(profile, suite.tests), notes


def thresholdless(suite: Suite) -> Suite:
    """A copy of the suite with every gate removed (tests, inline entries and cells), fit for a
    baseline run, which refuses any gate. Tests the profile does not name are left out, and a
    per-product matrix runs as its parent test (:func:`without_gpu_class_matrices`)."""
    profile = without_gpu_class_matrices(suite)[0].profile
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
