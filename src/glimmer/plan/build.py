"""Building the plan (§2.4): every refusal at start, in order, then the pinned document.

A refused plan means the run ends ``Error`` with a ``resolve`` result before any node is
touched. The order is part of the contract (the first refusal found is the one reported):

1. malformed thresholds anywhere (all of them named, first 5, then "and N more");
2. a baseline run with gated tests;
3. a variant axis that cannot become an environment variable;
4. per planned test, in plan order: a duplicate name, the Pair topology, the Group topology,
   the host paths, the soak shape.

An unknown scope is not refused here: the engine settles that one test ``Error`` when it reaches
it, so the rest of the run still judges its hardware. Image availability is not checked either;
an unresolvable image becomes an Error result of the unit whose runner it could not build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from glimmer.api.overlay import is_env_safe_axis
from glimmer.api.pinned import PlanDocument, PlannedTest
from glimmer.api.profile import BurnInProfile
from glimmer.api.threshold import to_contract
from glimmer.contract.kinds import kind_spec
from glimmer.contract.vocab import Scope
from glimmer.errors import GlimmerError
from glimmer.plan.units import scope_of
from glimmer.verdict.lint import MAX_ADVISED, Problem, Severity, lint_thresholds, soak_problems
from glimmer.verdict.text import name_some, plural, quote
from glimmer.verdict.units import PAIR_SIZE


class PlanRefused(GlimmerError):
    """The plan cannot be built: the run must not touch any node."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class PlannedProblem:
    """A linter problem of one planned test's gates."""

    test: str
    problem: Problem

    def __str__(self) -> str:
        return f"{self.test}: {self.problem}"


def gate_problems(tests: Sequence[PlannedTest], severity: Severity) -> list[PlannedProblem]:
    """Every gate problem of ``severity`` across ``tests``, in plan and gate order, each linted
    against its own test's kind."""
    return [
        PlannedProblem(test.name, problem)
        for test in tests
        for problem in lint_thresholds(to_contract(test.spec.thresholds), test.spec.kind)
        if problem.severity is severity
    ]


def describe_problems(problems: Sequence[PlannedProblem], limit: int = MAX_ADVISED) -> str:
    """The first ``limit`` (5) problems, each with its test's name, then "and N more"."""
    return name_some([str(p) for p in problems], limit, sep="; ")


# --- the whole-plan refusals ---------------------------------------------------------------


def _malformed(tests: Sequence[PlannedTest]) -> str | None:
    found = gate_problems(tests, Severity.MALFORMED)
    if not found:
        return None
    count = len(found)
    return (
        f"{count} malformed {plural(count, 'threshold')} can never be evaluated, so every "
        f"verdict behind {plural(count, 'it', 'them')} would be wrong; fix "
        f"{plural(count, 'it', 'them')} before running: {describe_problems(found)}"
    )


def _gate_count(test: PlannedTest) -> str:
    count = len(test.spec.thresholds or ())
    return f"{test.name} ({count} {plural(count, 'threshold')})"


def _gated_baseline(tests: Sequence[PlannedTest], baseline: bool) -> str | None:
    gated = [t for t in tests if t.spec.thresholds]
    if not baseline or not gated:
        return None
    named = [_gate_count(t) for t in gated]
    count = len(gated)
    return (
        "spec.baseline is true: a baseline run measures and certifies nothing, but "
        f"{count} planned {plural(count, 'test')} {plural(count, 'has', 'have')} thresholds: "
        f"{name_some(named, MAX_ADVISED)}; remove the gates or unset spec.baseline"
    )


def _unreachable_axis(tests: Sequence[PlannedTest]) -> str | None:
    for test in tests:
        for axis in sorted(test.axes or {}):
            if not is_env_safe_axis(axis):
                return (
                    f"variant {quote(test.name)} has axis {quote(axis)}, which cannot become "
                    "the environment variable BURNIN_VARIANT_<AXIS> (letters, digits and "
                    "underscore, not starting with a digit), so the cell would run its "
                    "default configuration under that label; rename the axis"
                )
    return None


# --- the per-test refusals ---------------------------------------------------------------


def _first_duplicate(names: Sequence[str]) -> str | None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def _pair(test: PlannedTest, targets: Sequence[str], cap: int) -> str | None:
    name = quote(test.name)
    if len(targets) != PAIR_SIZE:
        return (
            f"Pair test {name} needs exactly 2 targets (server, then client), but the run "
            f"targets {len(targets)} {plural(len(targets), 'node')}"
        )
    if targets[0] == targets[1]:
        return (
            f"Pair test {name} targets node {quote(targets[0])} twice; a link needs two "
            "distinct nodes"
        )
    if cap < PAIR_SIZE:
        return (
            f"Pair test {name} loads both nodes of the link at once, but maxConcurrentNodes is "
            f"{cap}; set it to at least 2"
        )
    return None


def _group(test: PlannedTest, targets: Sequence[str], cap: int) -> str | None:
    name = quote(test.name)
    size = len(targets)
    if size < 2:
        return (
            f"Group test {name} needs at least 2 targets (one rank per node), but the run "
            f"targets {size} {plural(size, 'node')}"
        )
    duplicate = _first_duplicate(targets)
    if duplicate is not None:
        return (
            f"Group test {name} targets node {quote(duplicate)} more than once; each rank "
            "needs its own node"
        )
    runner = test.spec.runner
    explicit_image = runner is not None and bool(runner.image)
    row = kind_spec(test.spec.kind)
    if not explicit_image and (row is None or not row.group_capable):
        return (
            f"Group test {name} would run the default image of kind {quote(test.spec.kind)}, "
            "which cannot run one rank per node of a collective (only nccl's can); set "
            "spec.runner.image to a runner that can"
        )
    if cap < size:
        return (
            f"Group test {name} loads all {size} target nodes at once, but maxConcurrentNodes "
            f"is {cap}; set it to at least {size}"
        )
    return None


def _host_paths(test: PlannedTest) -> str | None:
    name = quote(test.name)
    mounts = test.spec.runner.host_paths if test.spec.runner is not None else None
    seen: set[str] = set()
    for index, mount in enumerate(mounts or ()):
        for field, value in (("path", mount.path), ("mountPath", mount.mount_path)):
            if not value:
                return f"test {name}: hostPaths[{index}].{field} is empty"
            if not value.startswith("/"):
                return (
                    f"test {name}: hostPaths[{index}].{field} {quote(value)} is not an "
                    "absolute path"
                )
        if mount.mount_path in seen:
            return (
                f"test {name}: hostPaths[{index}].mountPath {quote(mount.mount_path)} is "
                "mounted twice"
            )
        seen.add(mount.mount_path)
    return None


def _soak(test: PlannedTest) -> str | None:
    spec = test.spec
    if spec.soak is None:
        return None
    problems = soak_problems(
        spec.kind, spec.duration_seconds, spec.soak.segment_seconds, spec.repeat_count
    )
    if not problems:
        return None
    return f"segmented soak {quote(test.name)} is refused: " + "; ".join(
        f"{p.field}: {p.reason}" for p in problems
    )


def _test_refusal(test: PlannedTest, targets: Sequence[str], cap: int) -> str | None:
    scope = scope_of(test.spec)
    if scope is Scope.PAIR:
        found = _pair(test, targets, cap)
    elif scope is Scope.GROUP:
        found = _group(test, targets, cap)
    else:
        found = None
    return found or _host_paths(test) or _soak(test)


def _per_test(tests: Sequence[PlannedTest], targets: Sequence[str], cap: int) -> str | None:
    seen: set[str] = set()
    for test in tests:
        if test.name in seen:
            return (
                f"two planned tests are named {quote(test.name)}; a name is a result's "
                "identity, so rename one test or variant"
            )
        seen.add(test.name)
        found = _test_refusal(test, targets, cap)
        if found is not None:
            return found
    return None


def _first(refusals: Iterable[Callable[[], str | None]]) -> str | None:
    for refusal in refusals:
        found = refusal()
        if found is not None:
            return found
    return None


def build_plan(
    profile: BurnInProfile,
    tests: Sequence[PlannedTest],
    targets: Sequence[str],
    cap: int,
    baseline: bool,
) -> PlanDocument:
    """The plan to pin, from the planned tests (variants already expanded) of ``profile``.

    Raises PlanRefused with the first refusal in the contract's order.
    """
    refusal = _first(
        (
            lambda: _malformed(tests),
            lambda: _gated_baseline(tests, baseline),
            lambda: _unreachable_axis(tests),
            lambda: _per_test(tests, targets, cap),
        )
    )
    if refusal is not None:
        raise PlanRefused(refusal)
    return PlanDocument(
        targets=list(targets),
        sinks=list(profile.spec.sinks) if profile.spec.sinks else None,
        fail_fast=profile.spec.fail_fast,
        baseline=baseline,
        profile_entries=[entry.model_copy(deep=True) for entry in profile.spec.tests],
        tests=[test.model_copy(deep=True) for test in tests],
    )
