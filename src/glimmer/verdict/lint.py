"""The threshold linter (§4.3): gates that can never mean what their author meant.

Advisory only: evaluation never consults it. Two severities:

* **Malformed** — the gate cannot be evaluated at all (a bad name, a bound that is not a finite
  number, an unknown comparison). A run refuses to start on one.
* **Unsound** — the gate evaluates, but fails or passes for the wrong reason (an exact compare on
  a continuous figure, a gate on evidence, on a spread that is ``n/a`` on one device, or on a
  metric the test's kind never prints). The run proceeds; the ``ThresholdsSound`` condition
  says so.

The kind-agnostic form is the kind-aware form with kind ``custom``: nobody knows what somebody
else's runner prints, so only the kind-independent checks apply.

Beyond the gates, :func:`lint_test` checks a whole test definition for the two burst-kind
defects of the original's history (#25, #96). Decisions, made deliberately:

* ``durationSeconds`` on a burst-only kind is **Unsound**: the run works, but the duration only
  sizes the pod deadline, so the test claims a soak it never performs.
* a readiness probe on perftest's control port (18515, or its latency port one above) of a
  kind that runs perftest is **Unsound**: perftest listens there with a backlog of one, so the
  probe's own connection competes with the client's (Appendix C #6, the fabric-soak sample).
* a segmented soak on a burst-only kind, and every other soak shape the plan refuses
  (``segmentSeconds`` under 300, no duration, a segment longer than the soak, repeats), is
  **Malformed**: the run would be refused at start, exactly like a malformed gate, so the linter
  says so first. :func:`soak_problems` is the one statement of those refusals; the planner calls
  it too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from glimmer.contract.emitted import emitted_metrics
from glimmer.contract.kinds import CUSTOM, burst_only, is_built_in
from glimmer.contract.names import unit_of, validate_metric_name
from glimmer.contract.registry import SPREAD_METRICS, ThresholdUse, Unit, lookup
from glimmer.contract.vocab import Applicability, Comparison, Threshold
from glimmer.verdict.numbers import read_float
from glimmer.verdict.text import name_some, quote

MIN_SEGMENT_SECONDS = 300
MAX_ADVISED = 5  # Appendix A: problems named in a condition or a refusal before "and N more"
# Kinds whose runners drive perftest (ib_write_bw / ib_write_lat), its default control port and
# the variable that moves it. The latency phase listens one port above.
PERFTEST_KINDS = frozenset({"ib-write-bw", "gpudirect-rdma", "fabric-soak"})
PERFTEST_DEFAULT_PORT = 18515
PERFTEST_PORT_ENV = "BURNIN_PERFTEST_PORT"
MAX_SUGGESTED_METRICS = 6


class Severity(StrEnum):
    MALFORMED = "Malformed"
    UNSOUND = "Unsound"


@dataclass(frozen=True)
class Problem:
    """One defect. Gate problems carry the gate's index and metric; test-level problems carry
    the field they are about instead (``index`` None)."""

    index: int | None
    metric: str
    severity: Severity
    reason: str
    field: str = ""

    def __str__(self) -> str:
        if self.index is None:
            return f"{self.field} ({self.severity}): {self.reason}"
        return f"threshold {self.index} ({self.metric}, {self.severity}): {self.reason}"


_EXACT = frozenset({Comparison.EQUAL.value, Comparison.NOT_EQUAL.value})
_COMPARISONS = tuple(c.value for c in Comparison)


def _grammar_problems(gate: Threshold) -> Iterable[tuple[Severity, str]]:
    why = validate_metric_name(gate.metric)
    if why is not None:
        yield Severity.MALFORMED, why
    bound = read_float(gate.value)
    if bound.value is None:
        yield Severity.MALFORMED, f"value {quote(gate.value)} is not a number"
    elif not bound.finite:
        yield Severity.MALFORMED, f"value {quote(gate.value)} is not a finite number"
    if gate.comparison not in _COMPARISONS:
        yield (
            Severity.MALFORMED,
            f"comparison {quote(gate.comparison)} is not one of {', '.join(_COMPARISONS)}; "
            "such a gate is never satisfied",
        )


def _exactness_problems(gate: Threshold) -> Iterable[tuple[Severity, str]]:
    if gate.comparison not in _EXACT:
        return
    unit = unit_of(gate.metric)
    if unit is not Unit.NONE:
        yield (
            Severity.UNSOUND,
            f"{gate.comparison} on a continuous measurement in {unit.value} compares exactly, "
            "with no tolerance, so it almost never holds; use GreaterThanOrEqual or "
            "LessThanOrEqual (a band is one of each)",
        )
        return
    bound = read_float(gate.value)
    if bound.value is not None and bound.finite and bound.value != math.trunc(bound.value):
        yield (
            Severity.UNSOUND,
            f"{gate.comparison} with the non-integer value {quote(gate.value)} compares exactly, "
            "with no tolerance; Equal and NotEqual are meant for integer counters",
        )


def _emitted_problem(kind: str, name: str) -> tuple[Severity, str] | None:
    emitted = emitted_metrics(kind)
    if emitted is None or name in emitted:
        return None
    gateable = sorted(
        n for n in emitted if (spec := lookup(n)) is None or spec.use is ThresholdUse.ACCEPTANCE
    )
    same_unit = [n for n in gateable if unit_of(n) is unit_of(name)]
    if same_unit:
        offer = f"its gateable {unit_of(name).value or 'dimensionless'} metrics are "
        offer += name_some(same_unit, MAX_SUGGESTED_METRICS)
    elif gateable:
        offer = "its gateable metrics are " + name_some(gateable, MAX_SUGGESTED_METRICS)
    else:
        offer = "it prints nothing that can be gated"
    return (
        Severity.UNSOUND,
        f"kind {kind} never emits metric {quote(name)}, so this gate fails closed on every "
        f"execution; {offer}",
    )


def _kind_problems(kind: str, gate: Threshold) -> Iterable[tuple[Severity, str]]:
    name = gate.metric
    spec = lookup(name)
    grammatical = validate_metric_name(name) is None
    if spec is None and is_built_in(kind) and grammatical:
        yield (
            Severity.UNSOUND,
            f"metric {quote(name)} is not registered, and kind {kind} is built in: its runners "
            "print registered names, so this is likely a misspelling that fails closed",
        )
    if name in SPREAD_METRICS and gate.applicability != Applicability.REQUIRED_IF_MEASURABLE:
        yield (
            Severity.UNSOUND,
            f"{name} is n/a on a node with one device (and under MIG), so a Required gate on it "
            "fails every such node; set applicability: RequiredIfMeasurable",
        )
    if spec is not None and spec.use is ThresholdUse.EVIDENCE:
        yield Severity.UNSOUND, f"registered as Evidence, not for acceptance: {spec.description}"
    if spec is not None and grammatical:
        found = _emitted_problem(kind, name)
        if found is not None:
            yield found


def lint_thresholds(thresholds: Sequence[Threshold], kind: str = CUSTOM) -> list[Problem]:
    """Every problem of every gate, in gate order (several per gate are possible).

    With the default kind ``custom`` only the kind-independent checks apply; with a built-in
    kind the gate is also checked against the registry and against what that kind emits.
    """
    problems: list[Problem] = []
    for index, gate in enumerate(thresholds):
        found = [
            *_grammar_problems(gate),
            *_exactness_problems(gate),
            *_kind_problems(kind, gate),
        ]
        problems.extend(Problem(index, gate.metric, sev, why) for sev, why in found)
    return problems


@dataclass(frozen=True)
class TestDefinition:
    """The parts of a (planned or declared) test the linter reads.

    ``segment_seconds`` is None when the test is not a segmented soak. ``writable_host_paths``
    are the host paths mounted read-write, each with its index in ``runner.hostPaths``.
    """

    __test__ = False  # a domain name, not a pytest class

    kind: str
    thresholds: Sequence[Threshold] = ()
    duration_seconds: int = 0
    repeat_count: int = 1
    segment_seconds: int | None = None
    readiness_tcp_port: int | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    writable_host_paths: Sequence[tuple[int, str]] = ()


# Host paths a runner should never be able to write, and why (paths as the loader normalises
# them). A test measures a node; writing the node's whole filesystem is never part of that.
WRITABLE_HOST_PATH_RISKS: Mapping[str, str] = {
    "/": "mounts the node's whole filesystem read-write: the runner can change or delete "
    "anything on the node, its kubelet, drivers and other tenants' data included; mount the "
    "one folder it writes (a scratch folder, /dev/infiniband) and leave / read-only",
}


def _field_problem(field: str, severity: Severity, reason: str) -> Problem:
    return Problem(index=None, metric="", severity=severity, reason=reason, field=field)


def soak_problems(
    kind: str, duration_seconds: int, segment_seconds: int, repeat_count: int
) -> list[Problem]:
    """Why a segmented soak of this shape would be refused at start (all Malformed)."""
    problems: list[Problem] = []
    if burst_only(kind):
        problems.append(
            _field_problem(
                "soak",
                Severity.MALFORMED,
                f"kind {kind} is a burst: it measures once, so it cannot be soaked in segments",
            )
        )
    if segment_seconds < MIN_SEGMENT_SECONDS:
        problems.append(
            _field_problem(
                "soak.segmentSeconds",
                Severity.MALFORMED,
                f"segmentSeconds {segment_seconds} is below the minimum {MIN_SEGMENT_SECONDS}",
            )
        )
    if duration_seconds <= 0:
        problems.append(
            _field_problem(
                "durationSeconds",
                Severity.MALFORMED,
                "a segmented soak needs durationSeconds > 0: it is the whole soak's length",
            )
        )
    elif segment_seconds > duration_seconds:
        problems.append(
            _field_problem(
                "soak.segmentSeconds",
                Severity.MALFORMED,
                f"segmentSeconds {segment_seconds} is longer than durationSeconds "
                f"{duration_seconds}",
            )
        )
    if repeat_count != 1:
        problems.append(
            _field_problem(
                "repeatCount",
                Severity.MALFORMED,
                f"repeatCount {repeat_count} on a segmented soak; a soak is one execution, "
                "so repeatCount must be 1",
            )
        )
    return problems


def _probe_problem(test: TestDefinition) -> Problem | None:
    if test.kind not in PERFTEST_KINDS or test.readiness_tcp_port is None:
        return None
    configured = test.env.get(PERFTEST_PORT_ENV, "")
    base = int(configured) if configured.isdigit() else PERFTEST_DEFAULT_PORT
    if test.readiness_tcp_port not in (base, base + 1):
        return None
    return _field_problem(
        "runner.readinessProbe",
        Severity.UNSOUND,
        f"the readiness probe connects to perftest's control port {test.readiness_tcp_port}, "
        "which listens with a backlog of one: the probe's connection competes with the "
        "client's and can make a healthy link look broken; probe a port served for health "
        "checks instead (ib-write-bw serves one on BURNIN_HEALTH_PORT, default 18510)",
    )


def _host_path_problems(test: TestDefinition) -> list[Problem]:
    return [
        _field_problem(f"runner.hostPaths[{index}].readOnly", Severity.UNSOUND, why)
        for index, path in test.writable_host_paths
        if (why := WRITABLE_HOST_PATH_RISKS.get(path)) is not None
    ]


def lint_test(test: TestDefinition) -> list[Problem]:
    """Lint a whole test: its gates against its kind, its duration, probe, host paths and soak
    shape."""
    problems = lint_thresholds(test.thresholds, test.kind)
    if burst_only(test.kind) and test.duration_seconds > 0 and test.segment_seconds is None:
        problems.append(
            _field_problem(
                "durationSeconds",
                Severity.UNSOUND,
                f"kind {test.kind} is a burst: durationSeconds only sizes the pod deadline and "
                "buys no longer measurement, so the test claims a soak it never performs",
            )
        )
    probe = _probe_problem(test)
    if probe is not None:
        problems.append(probe)
    problems += _host_path_problems(test)
    if test.segment_seconds is not None:
        problems += soak_problems(
            test.kind, test.duration_seconds, test.segment_seconds, test.repeat_count
        )
    return problems


def summarize(problems: Sequence[Problem], limit: int = MAX_ADVISED, prefix: str = "") -> str:
    """Name the first ``limit`` problems (``; ``-separated, each optionally prefixed, e.g. with
    its test's name) and count the rest: ``…; and 3 more``. For the ``ThresholdsSound``
    condition and the plan's refusal of malformed gates."""
    return name_some([f"{prefix}{p}" for p in problems], limit, sep="; ")


def has_malformed(problems: Iterable[Problem]) -> bool:
    """True when any problem would refuse a run."""
    return any(p.severity is Severity.MALFORMED for p in problems)
