"""Input assembly (burn-in spec §6.1): one view of a BurnInRun that every report format reads.

The spec's reporter assembles delivery envelopes; glimmer's reads the BurnInRun itself (what
``glimmer run --output json`` writes), which holds the same results plus the pinned plan, so the
gates each test was held to are known exactly. Rules shared by all formats live here:

* Pair and Group results (or scope-less results naming several nodes) are links: they are never
  shown as any one node's verdict. Every other result belongs to its first node; node-less
  (synthetic) results are kept apart as *unassigned*.
* Nodes come from results, link endpoints and the captured fingerprints, sorted by name.
* The run window is the earliest result start to the latest result finish (the run's own start
  and finish only when no result carries a time).
* A run that has not reached a terminal phase is *progress*, and says so everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from glimmer import __version__
from glimmer.api.pinned import PLAN_ANNOTATION, PlanDocument, PlanError, decode_plan
from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import TERMINAL_PHASES, Phase
from glimmer.fleet.topology import Topology
from glimmer.reports.figures import Distribution, SeriesChart, distributions, soak_series
from glimmer.reports.findings import Finding, finding_of
from glimmer.reports.matrix import columns, judged_elsewhere
from glimmer.reports.racks import Rack, racks_of
from glimmer.reports.units import Gate, Unit
from glimmer.reports.words import status_word, worst
from glimmer.verdict.units import count_units

GENERATOR = f"glimmer-burnin {__version__}"

BASELINE_LABEL = "BASELINE — measurement only, no thresholds applied"
INCOMPLETE_LABEL = "INCOMPLETE — the run had not finished; this is progress, not a verdict"


@dataclass(frozen=True)
class Stamp:
    """Who generated a report and when; fixed in tests so output is byte-for-byte stable."""

    generator: str
    at: datetime


@dataclass(frozen=True)
class Gpu:
    """One GPU of a node as the fleet declares it (index within the node)."""

    index: int
    serial: str | None
    pci_bus_id: str | None


@dataclass(frozen=True)
class NodeView:
    """One node: its own (non-link) results, the links it is an endpoint of, its fingerprint
    and what is known of its GPUs and driver (None where nothing was captured)."""

    name: str
    results: tuple[Unit, ...]
    links: tuple[Unit, ...]
    fingerprint: str | None
    gpus: tuple[Gpu, ...] | None = None  # from the fleet; None when no fleet knows the node
    gpu_count: int | None = None  # from the fleet, else what every runner here agreed it saw
    driver: str | None = None  # driverVersion, when every runner here that reported it agrees

    @property
    def word(self) -> str | None:
        """The node's verdict over its own results (links never speak for a node)."""
        return worst([u.word for u in self.results])

    def result(self, test: str) -> tuple[Unit, ...]:
        """This node's results of one test (several when a test ran more than once here)."""
        return tuple(u for u in self.results if u.shown_as == test)


@dataclass(frozen=True)
class Counts:
    passed: int
    failed: int
    errored: int
    skipped: int

    def sentence(self) -> str:
        return (
            f"{self.passed} Passed, {self.failed} Failed, {self.errored} Errored, "
            f"{self.skipped} Skipped"
        )


@dataclass(frozen=True)
class Report:
    """Everything a renderer needs; renderers read nothing else."""

    namespace: str
    name: str
    uid: str | None
    profile: str
    cluster: str | None
    phase: str
    final: bool
    baseline: bool
    started_at: datetime | None
    finished_at: datetime | None
    counts: Counts
    tests: tuple[str, ...]  # column order: the plan's, then any others by name
    units: tuple[Unit, ...]  # every result, in status order
    nodes: tuple[NodeView, ...]
    links: tuple[Unit, ...]
    unassigned: tuple[Unit, ...]
    racks: tuple[Rack, ...]
    distributions: tuple[Distribution, ...]
    series: tuple[SeriesChart, ...]
    warnings: tuple[str, ...]
    stamp: Stamp
    planned_units: int | None  # executions the pinned plan asked for; None without a plan

    @property
    def title(self) -> str:
        """``namespace/name`` of the run."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def word(self) -> str:
        return status_word(self.phase)

    @property
    def labels(self) -> tuple[str, ...]:
        """The qualifiers stated next to the phase wherever it is shown."""
        out: list[str] = []
        if not self.final:
            out.append(INCOMPLETE_LABEL)
        if self.baseline:
            out.append(BASELINE_LABEL)
        return tuple(out)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every unit that did not pass, in status order: what the HTML report leads with."""
        return tuple(u.finding for u in self.units if u.finding is not None)

    def node(self, name: str) -> NodeView | None:
        return next((n for n in self.nodes if n.name == name), None)


def _agreed(units: tuple[Unit, ...], *metrics: str) -> str | None:
    """The value every unit that reported one of ``metrics`` agrees on (first name wins)."""
    seen = set()
    for u in units:
        value = next((u.metric(m) for m in metrics if u.metric(m) is not None), None)
        if value is not None:
            seen.add(value)
    return seen.pop() if len(seen) == 1 else None


def _node(
    name: str,
    own: tuple[Unit, ...],
    links: tuple[Unit, ...],
    fingerprint: str | None,
    fleet: Topology | None,
) -> NodeView:
    gpus: tuple[Gpu, ...] | None = None
    at = fleet.node_index.get(name) if fleet is not None else None
    if fleet is not None and at is not None:
        record = fleet.nodes[at]
        gpus = tuple(
            Gpu(i, fleet.gpu_board_serials[g] or None, fleet.gpu_pci_bus_ids[g] or None)
            for i, g in enumerate(record.gpu_indices)
        )
    counted = _agreed(own, "deviceCount", "devicesVisible")
    count = (
        len(gpus) if gpus is not None else (int(counted) if counted and counted.isdigit() else None)
    )
    return NodeView(
        name=name,
        results=own,
        links=links,
        fingerprint=fingerprint,
        gpus=gpus,
        gpu_count=count,
        driver=_agreed(own, "driverVersion"),
    )


def _plan(run: BurnInRun) -> tuple[PlanDocument | None, str | None]:
    value = (run.metadata.annotations or {}).get(PLAN_ANNOTATION)
    if value is None:
        return (
            None,
            "the run carries no pinned plan, so the gates each test was held to are not shown",
        )
    try:
        return decode_plan(value), None
    except PlanError as e:
        return None, f"the pinned plan could not be read ({e}); gates are not shown"


def _planned_units(plan: PlanDocument | None) -> int | None:
    # The units the plan asks for, by the one rule the engine runs them by: a Node test once
    # per distinct target (a node named twice is one unit), a Pair or Group test once.
    if plan is None:
        return None
    return count_units((t.spec.scope for t in plan.tests), plan.targets)


def _window(units: tuple[Unit, ...], run: BurnInRun) -> tuple[datetime | None, datetime | None]:
    starts = [u.started_at for u in units if u.started_at is not None]
    ends = [u.finished_at for u in units if u.finished_at is not None]
    status = run.status
    start = min(starts) if starts else (status.started_at if status else None)
    end = max(ends) if ends else (status.finished_at if status else None)
    return start, end


def _warnings(run: BurnInRun, units: tuple[Unit, ...], final: bool, baseline: bool) -> list[str]:
    out: list[str] = []
    if not final:
        out.append(
            "The run had not finished when this report was made: results still open are "
            "progress, and the run's verdict is not settled."
        )
    if baseline:
        out.append(
            "This is a baseline run: it measured and applied no thresholds, so a PASS here "
            "certifies nothing (a runner's own failure still shows as FAIL)."
        )
    for cond in (run.status.conditions if run.status else None) or []:
        if cond.type == "ThresholdsSound" and cond.status == "False":
            out.append(f"The gates of this run were flagged unsound: {cond.message or cond.reason}")
    for u in units:
        for a in u.artifacts:
            if a.dropped:
                out.append(
                    f"Evidence {a.name!r} of {u.name} on {u.label} was not kept: {a.dropped}"
                )
        if u.result.truncated_attempts:
            out.append(
                f"{u.name} on {u.label}: {u.result.truncated_attempts} passing attempt(s) were "
                "dropped from the history, so its series has gaps"
            )
    return out


def assemble(run: BurnInRun, fleet: Topology | None = None, stamp: Stamp | None = None) -> Report:
    """The report model of ``run``; ``fleet`` places nodes in racks when it knows them."""
    status = run.status
    plan, plan_problem = _plan(run)
    planned = {t.name: t for t in plan.tests} if plan else {}
    results = (status.results if status else None) or []
    column = columns(plan)
    units = tuple(
        Unit(
            result=r,
            gates=tuple(
                Gate(t.metric, t.comparison.value, t.value, t.applicability.value)
                for t in ((planned[r.name].spec.thresholds or []) if r.name in planned else [])
            ),
            required=planned[r.name].required if r.name in planned else None,
            finding=finding_of(r, plan),
            column=column.get(r.name, ""),
        )
        for r in results
    )
    phase = str(status.phase) if status else str(Phase.PENDING)
    final = status is not None and status.phase in TERMINAL_PHASES
    baseline = bool(run.spec.baseline or (plan is not None and plan.baseline))

    in_plan = list(dict.fromkeys(column.get(t.name, t.name) for t in plan.tests)) if plan else []
    others = sorted({u.shown_as for u in units if not u.synthetic and u.shown_as not in in_plan})
    ran = {u.shown_as for u in units}
    tests = tuple([t for t in in_plan if t in ran] + others)

    links = tuple(u for u in units if u.is_link)
    unassigned = tuple(u for u in units if not u.is_link and not u.nodes)
    fingerprints = (status.fingerprint if status else None) or {}
    names = {u.node for u in units if not u.is_link and u.nodes}
    names |= {n for u in links for n in u.nodes}
    names |= set(fingerprints)
    # Grouped once: a thousand-node run must not scan every result for every node.
    own: dict[str, list[Unit]] = {}
    touching: dict[str, list[Unit]] = {}
    for u in units:
        if judged_elsewhere(u.result):
            continue  # a gpuClass cell that declined a node another cell judges
        if u.is_link:
            for n in dict.fromkeys(u.nodes):
                touching.setdefault(n, []).append(u)
        elif u.nodes:
            own.setdefault(u.node, []).append(u)
    nodes = tuple(
        _node(n, tuple(own.get(n, ())), tuple(touching.get(n, ())), fingerprints.get(n), fleet)
        for n in sorted(names)
    )

    start, end = _window(units, run)
    warnings = _warnings(run, units, final, baseline)
    if plan_problem:
        warnings.append(plan_problem)
    checkpointed = frozenset(
        t.name for t in (plan.tests if plan else []) if t.spec.checkpoint_interval_seconds
    )
    return Report(
        namespace=run.metadata.namespace or "",
        name=run.name,
        uid=run.metadata.uid,
        profile=run.spec.profile_ref,
        cluster=None,
        phase=phase,
        final=final,
        baseline=baseline,
        started_at=start,
        finished_at=end,
        counts=Counts(
            passed=status.passed if status else 0,
            failed=status.failed if status else 0,
            errored=status.errored if status else 0,
            skipped=status.skipped if status else 0,
        ),
        tests=tests,
        units=units,
        nodes=nodes,
        links=links,
        unassigned=unassigned,
        racks=racks_of([n.name for n in nodes], fleet),
        distributions=distributions(units, tests),
        series=soak_series(units, tests, checkpointed, start),
        warnings=tuple(warnings),
        stamp=stamp or Stamp(GENERATOR, datetime.now(UTC)),
        planned_units=_planned_units(plan),
    )
