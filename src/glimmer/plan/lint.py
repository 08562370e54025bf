"""Linting what a user wrote: every test definition, every inline entry and every variant cell,
each checked by the verdict layer's linter with the kind its gates belong to.

A variant cell is linted as the planned test it becomes (its overlays applied), so a cell that
replaces its parent's gates is judged on its own gates, against the parent's kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glimmer.api.load import Loaded
from glimmer.api.overlay import apply_overlay
from glimmer.api.profile import BurnInProfile, TestVariant
from glimmer.api.test import BurnInTest, BurnInTestSpec
from glimmer.api.threshold import to_contract
from glimmer.contract.kinds import CUSTOM
from glimmer.errors import Location
from glimmer.verdict.lint import Problem, Severity, TestDefinition, lint_test


@dataclass(frozen=True)
class Finding:
    """One linter problem, placed: which object, which test (or cell), which field."""

    location: Location
    test: str  # the test, entry or cell name the problem is about
    problem: Problem

    @property
    def severity(self) -> Severity:
        return self.problem.severity


def definition_of(spec: BurnInTestSpec) -> TestDefinition:
    """What the linter reads of a test spec."""
    runner = spec.runner
    env: dict[str, str] = {}
    probe_port: int | None = None
    writable: list[tuple[int, str]] = []
    if runner is not None:
        writable = [
            (i, mount.path)
            for i, mount in enumerate(runner.host_paths or ())
            if not mount.read_only
        ]
        for var in runner.env or ():
            if var.value is not None:
                env[var.name] = var.value
        tcp = (runner.readiness_probe or {}).get("tcpSocket")
        if isinstance(tcp, dict) and isinstance(tcp.get("port"), int):
            probe_port = tcp["port"]
    return TestDefinition(
        kind=spec.kind,
        thresholds=to_contract(spec.thresholds),
        duration_seconds=spec.duration_seconds,
        repeat_count=spec.repeat_count,
        segment_seconds=spec.soak.segment_seconds if spec.soak else None,
        readiness_tcp_port=probe_port,
        env=env,
        writable_host_paths=tuple(writable),
    )


def lint_spec(spec: BurnInTestSpec) -> list[Problem]:
    """Every problem of one test spec."""
    return lint_test(definition_of(spec))


def _field_of(base: str, problem: Problem) -> str:
    if problem.index is not None:
        return f"{base}.thresholds[{problem.index}]"
    return f"{base}.{problem.field}" if problem.field else base


def _place(item: Loaded, base: str, test: str, problems: list[Problem]) -> list[Finding]:
    return [Finding(item.locate(_field_of(base, p)), test, p) for p in problems]


def _lint_cell(
    item: Loaded, base: str, name: str, parent: BurnInTestSpec | None, cell: TestVariant
) -> list[Finding]:
    """The problems a variant cell adds over its entry: its own gates (when it replaces them)
    and its own duration or repeat count. What it inherits was reported on the entry."""
    own_gates = cell.thresholds is not None
    own_shape = cell.duration_seconds is not None or cell.repeat_count is not None
    if not own_gates and not own_shape:
        return []
    if parent is None:
        # The referenced test is not among the inputs: the cell's gates can still be checked
        # for everything that does not depend on the kind.
        cell_spec = BurnInTestSpec(kind=CUSTOM, thresholds=cell.thresholds)
    else:
        cell_spec = apply_overlay(parent, cell)
    problems = [
        p for p in lint_spec(cell_spec) if (own_gates if p.index is not None else own_shape)
    ]
    return _place(item, base, name, problems)


def _lint_profile(
    item: Loaded, profile: BurnInProfile, tests: dict[str, BurnInTestSpec]
) -> list[Finding]:
    findings: list[Finding] = []
    for index, entry in enumerate(profile.spec.tests):
        name = entry.entry_name(index)
        base = f"spec.tests[{index}]"
        spec = entry.inline if entry.inline is not None else tests.get(name)
        if entry.inline is not None:
            findings += _place(item, f"{base}.inline", name, lint_spec(entry.inline))
        for v, cell in enumerate(entry.variants or ()):
            findings += _lint_cell(item, f"{base}.variants[{v}]", f"{name}-{cell.name}", spec, cell)
    return findings


def lint_loaded(loaded: Sequence[Loaded]) -> list[Finding]:
    """Every linter finding across ``loaded``, in input order."""
    tests: dict[str, BurnInTestSpec] = {
        obj.metadata.name: obj.spec
        for obj in (i.obj for i in loaded)
        if isinstance(obj, BurnInTest) and obj.metadata.name
    }
    findings: list[Finding] = []
    for item in loaded:
        if isinstance(item.obj, BurnInTest):
            findings += _place(item, "spec", item.name, lint_spec(item.obj.spec))
        elif isinstance(item.obj, BurnInProfile):
            findings += _lint_profile(item, item.obj, tests)
    return findings
