"""Collecting a fleet's measurements from baseline runs, per planned test and metric.

Only results that settled cleanly (Passed) are measurements of a healthy unit: a Failed,
Errored or Skipped result says nothing about what a good part measures. A node is *clean* when
no result naming it, in any run given, settled Failed or Error; the derived gates are
guaranteed to pass every clean unit's measurements (see :mod:`glimmer.baseline.rules`).

With ``by_product`` the samples are kept apart per GPU product, read from the product label the
run captured in ``status.fingerprint`` at start: a mixed fleet's distribution of, say, host to
device bandwidth is two humps, and a gate derived over both is too loose for either. A Pair or
Group whose nodes carry different products belongs to no product and is left out, noted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection as Sized
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import TERMINAL_PHASES, Phase, Scope
from glimmer.errors import InputError, Location
from glimmer.verdict.numbers import read_float

PRODUCT_LABEL = "nvidia.com/gpu.product"
_PRODUCT = re.compile(re.escape(PRODUCT_LABEL) + r"=(\S+)")
NO_PRODUCT = "no-gpu-product"
ALL_NODES = ""  # the one group when samples are not split by product
# Phases that indict a node: the clean-node guarantee does not extend to it.
_INDICTING = frozenset({Phase.FAILED, Phase.ERROR})


@dataclass(frozen=True)
class Sample:
    """One unit's numeric reading of a metric."""

    unit: str  # the node, "server/client" for a Pair, "rank0+rank1+…" for a Group
    value: float
    clean: bool  # every node of the unit is clean


@dataclass
class MetricSamples:
    """Everything the clean-settled results of one test said about one metric."""

    metric: str
    samples: list[Sample] = field(default_factory=list)
    unmeasurable: list[str] = field(default_factory=list)  # units that declared n/a
    missing: list[str] = field(default_factory=list)  # units that reported nothing
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (unit, text): not finite


@dataclass(frozen=True)
class Measured:
    """One clean-settled result as the gates will see it: its metrics and its n/a names."""

    unit: str
    clean: bool
    metrics: dict[str, str]
    unmeasurable: frozenset[str]


@dataclass
class TestSamples:
    """One planned test's results in one group (a GPU product, or the whole fleet)."""

    __test__ = False  # a domain name, not a pytest class

    test: str
    kind: str
    group: str
    results: list[Measured] = field(default_factory=list)
    metrics: dict[str, MetricSamples] = field(default_factory=dict)


@dataclass
class Collection:
    """The baseline runs' measurements, keyed by (group, planned test)."""

    runs: list[str]
    tests: dict[tuple[str, str], TestSamples] = field(default_factory=dict)
    groups: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    indicted: set[str] = field(default_factory=set)  # nodes with a Failed or Error result


def refusal(run: BurnInRun) -> str | None:
    """Why ``run`` cannot serve as a baseline, or None when it can."""
    if not run.spec.baseline:
        return (
            "is not a baseline run (spec.baseline is not true): its results were judged by "
            "the gates it ran with, so they are no unbiased measure of the fleet; run the "
            "profile without gates as a baseline run (spec.baseline: true) and derive from that"
        )
    phase = run.status.phase if run.status else Phase.PENDING
    if phase not in TERMINAL_PHASES:
        return f"has not finished (phase {phase}): derive from a settled run"
    results = run.status.results or [] if run.status else []
    if results and all(r.synthetic for r in results):
        # Refused at start (a gated baseline, busy targets): it measured nothing.
        return f"measured nothing: it was refused at start ({results[0].message or phase})"
    return None


def product_of(run: BurnInRun, node: str) -> str:
    """The GPU product label the run captured for ``node`` at start, or NO_PRODUCT."""
    captured = (run.status.fingerprint or {}).get(node, "") if run.status else ""
    found = _PRODUCT.search(captured)
    return found.group(1) if found else NO_PRODUCT


def unit_label(result: TestResult) -> str:
    """A unit's name in notes and comments: its node, link or group of nodes."""
    nodes = result.nodes or []
    if result.scope is Scope.GROUP:
        return "+".join(nodes)
    return "/".join(nodes)


def _indicted(runs: Sequence[BurnInRun]) -> set[str]:
    return {
        node
        for run in runs
        for r in (run.status.results or [] if run.status else [])
        if not r.synthetic and r.phase in _INDICTING
        for node in r.nodes or []
    }


def _classify(samples: TestSamples) -> None:
    # Every metric any result reported (or declared n/a) is classified for every result, so a
    # result that stayed silent about it is counted as missing, never overlooked.
    names = sorted({n for m in samples.results for n in (*m.metrics, *m.unmeasurable)})
    for name in names:
        found = samples.metrics[name] = MetricSamples(name)
        for m in samples.results:
            if name not in m.metrics:
                (found.unmeasurable if name in m.unmeasurable else found.missing).append(m.unit)
                continue
            text = m.metrics[name]
            value = read_float(text).value
            if name in m.unmeasurable or value is None or not math.isfinite(value):
                found.unreadable.append((m.unit, text))
            else:
                found.samples.append(Sample(m.unit, value, m.clean))


def collect(
    runs: Sequence[BurnInRun],
    *,
    by_product: bool = True,
    exclude: Sized[str] = (),
) -> Collection:
    """The measurements of every Passed result of ``runs``, per group and planned test.

    Raises InputError naming the run when one of them is not a finished baseline run.
    Results that involve a node in ``exclude`` are left out entirely (a node the operator
    judged suspect on review).
    """
    for run in runs:
        why = refusal(run)
        if why is not None:
            raise InputError(f"BurnInRun {run.name} {why}", Location(obj=f"BurnInRun/{run.name}"))
    out = Collection(runs=sorted(r.name for r in runs))  # sorted: the output ignores input order
    out.indicted = _indicted(runs)
    mixed = 0
    for run in runs:
        for result in _measured(run, exclude):
            nodes = result.nodes or []
            group = ALL_NODES
            if by_product:
                products = {product_of(run, n) for n in nodes}
                if len(products) != 1:
                    mixed += 1
                    continue
                group = products.pop()
            key = (group, result.name)
            if key not in out.tests:
                out.tests[key] = TestSamples(result.name, result.kind, group)
            clean = not any(n in out.indicted for n in nodes)
            measured = Measured(
                unit_label(result),
                clean,
                dict(result.metrics or {}),
                frozenset(result.unmeasurable or ()),
            )
            out.tests[key].results.append(measured)
    for samples in out.tests.values():
        _classify(samples)
    out.groups = sorted({g for g, _ in out.tests})
    if mixed:
        out.notes.append(
            f"{mixed} Pair/Group result(s) span nodes of different GPU products and belong to "
            "no product's distribution; they were left out"
        )
    if exclude:
        out.notes.append(f"excluded on request: {', '.join(sorted(exclude))}")
    return out


def _measured(run: BurnInRun, exclude: Sized[str]) -> Iterable[TestResult]:
    for result in run.status.results or [] if run.status else []:
        if result.synthetic or result.phase is not Phase.PASSED:
            continue
        if any(n in exclude for n in result.nodes or []):
            continue
        yield result
