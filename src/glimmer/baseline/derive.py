"""Deriving a gated profile from a thresholdless one and the fleet's baseline measurements.

Per group (a GPU product, or the whole fleet) and planned test, every measured metric goes
through the rule (:mod:`glimmer.baseline.rules`); the source's gates that no derived gate
replaces are kept or dropped (:mod:`glimmer.baseline.source`). Two checks then hold the result
to its claims before anything is written: the linter (:mod:`glimmer.verdict.lint`,
kind-aware) must find no problem with a derived gate, or the gate is dropped and the reason
kept; and every clean unit must pass every gate of the output
(:mod:`glimmer.baseline.guarantee`), or the derivation stops: a profile that fails the healthy
parts it was measured on is never written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from glimmer.api.threshold import Threshold
from glimmer.baseline import guarantee
from glimmer.baseline.collect import ALL_NODES, Collection, TestSamples
from glimmer.baseline.rules import (
    DEFAULT_K,
    DEFAULT_MIN_MARGIN,
    DEFAULT_MIN_SAMPLES,
    Declined,
    Gate,
    Skipped,
    derive_gate,
)
from glimmer.baseline.source import SourceGate, judge
from glimmer.baseline.suite import Planned, Suite, planned_tests, without_gpu_class_matrices
from glimmer.errors import InputError, Location
from glimmer.verdict.lint import lint_thresholds


@dataclass
class DerivedTest:
    """One planned test's derived gates, what it declined or skipped, and what became of the
    source profile's gates that no derived gate replaces."""

    planned: Planned
    results: int = 0
    clean: int = 0
    gates: list[Gate] = field(default_factory=list)
    declined: list[Declined] = field(default_factory=list)
    skipped: dict[Skipped, list[str]] = field(default_factory=dict)
    source: list[SourceGate] = field(default_factory=list)

    @property
    def kept(self) -> list[Threshold]:
        """The source gates carried over into the derived test."""
        return [g.threshold for g in self.source if g.kept]


@dataclass
class DerivedProfile:
    """The profile for one group: named after the source, with a suffix when split."""

    group: str
    suffix: str  # "" when there is one group, else "-<product slug>"
    tests: list[DerivedTest]


@dataclass
class Derivation:
    suite: Suite
    runs: list[str]
    k: float
    min_samples: int
    min_margin: float
    profiles: list[DerivedProfile]
    notes: list[str]


def slug(product: str) -> str:
    """A product label as a name suffix: lower case, runs of other characters as one dash."""
    return re.sub(r"[^a-z0-9]+", "-", product.lower()).strip("-") or "unlabelled"


def _lint(test: DerivedTest) -> None:
    # A gate the linter finds fault with would make the profile fail `glimmer lint`: drop it
    # and say why, rather than write a gate nobody should pin.
    gates = [g.threshold.to_contract() for g in test.gates]
    bad = {p.index: p.reason for p in lint_thresholds(gates, test.planned.kind)}
    if not bad:
        return
    kept = []
    for i, gate in enumerate(test.gates):
        if i in bad:
            test.declined.append(Declined(gate.threshold.metric, f"the linter: {bad[i]}"))
        else:
            kept.append(gate)
    test.gates = kept


def _carry_source(test: DerivedTest, samples: TestSamples | None, keep: bool) -> None:
    derived = {g.threshold.metric for g in test.gates}
    declined = {d.metric: d.reason for d in test.declined}
    test.source = [
        judge(
            g, kind=test.planned.kind, samples=samples, declined=declined.get(g.metric), keep=keep
        )
        for g in test.planned.gates
        if g.metric not in derived
    ]


def _check_guarantee(test: DerivedTest, samples: TestSamples | None) -> None:
    guarantee.check(test.planned.name, [g.threshold for g in test.gates] + test.kept, samples)


@dataclass(frozen=True)
class Settings:
    k: float
    min_samples: int
    min_margin: float
    keep_source: bool


def _derive_test(planned: Planned, samples: TestSamples | None, settings: Settings) -> DerivedTest:
    test = DerivedTest(planned)
    if samples is None:
        _carry_source(test, samples, settings.keep_source)
        return test
    test.results = len(samples.results)
    test.clean = sum(1 for m in samples.results if m.clean)
    for name in sorted(samples.metrics):
        outcome = derive_gate(
            samples.metrics[name],
            k=settings.k,
            min_samples=settings.min_samples,
            min_margin=settings.min_margin,
        )
        if isinstance(outcome, Gate):
            test.gates.append(outcome)
        elif isinstance(outcome, Declined):
            test.declined.append(outcome)
        else:
            test.skipped.setdefault(outcome, []).append(name)
    _lint(test)
    _carry_source(test, samples, settings.keep_source)
    _check_guarantee(test, samples)
    return test


def _kind_notes(collection: Collection, planned: list[Planned]) -> list[str]:
    kinds = {p.name: p.kind for p in planned}
    notes = []
    for (group, name), samples in sorted(collection.tests.items()):
        where = f" ({group})" if group != ALL_NODES else ""
        if name not in kinds:
            notes.append(f"results of {name!r}{where} match no planned test of the profile")
        elif samples.kind != kinds[name]:
            notes.append(
                f"results of {name!r}{where} are of kind {samples.kind}, the profile's test is "
                f"{kinds[name]}: not used"
            )
    return notes


def derive(
    suite: Suite,
    collection: Collection,
    *,
    k: float = DEFAULT_K,
    min_samples: int = DEFAULT_MIN_SAMPLES,
    min_margin: float = DEFAULT_MIN_MARGIN,
    keep_source: bool = True,
) -> Derivation:
    """The gated profile(s) the rule derives from ``collection`` for ``suite``'s tests.

    One profile per group of the collection (one, unless split by GPU product). A source
    gate on a metric the rule did not gate is kept if every clean unit passes it (unless
    ``keep_source`` is False). Raises InputError when the runs measured none of the profile's
    tests, and GuaranteeBroken if a gate of the output would fail a clean unit.
    """
    suite, matrix_notes = without_gpu_class_matrices(suite)
    planned = planned_tests(suite)
    usable = {
        key: s
        for key, s in collection.tests.items()
        if any(p.name == s.test and p.kind == s.kind for p in planned)
    }
    if not usable:
        raise InputError(
            f"the runs given ({', '.join(collection.runs)}) measured none of the tests of "
            f"profile {suite.profile.name!r}; derive with the profile the baseline ran",
            Location(field="--profile"),
        )
    settings = Settings(k, min_samples, min_margin, keep_source)
    groups = sorted({g for g, _ in usable})
    split = len(groups) > 1
    profiles = [
        DerivedProfile(
            group,
            f"-{slug(group)}" if split else "",
            [_derive_test(p, usable.get((group, p.name)), settings) for p in planned],
        )
        for group in groups
    ]
    notes = [*collection.notes, *matrix_notes, *_kind_notes(collection, planned)]
    return Derivation(suite, collection.runs, k, min_samples, min_margin, profiles, notes)
