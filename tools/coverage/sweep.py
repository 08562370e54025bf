"""The fault-coverage sweep: inject each fault mode alone, run the built-in profiles' tests on
the nodes it reaches and on nodes it does not, and say which detector saw it.

A detector (kind, metric) *detected* a mode when a built-in test of that kind, on a unit the
fault reaches, settled Failed or Error with its gate on that metric violated; an outcome
detector (kind, no metric) when the unit settled Failed or Error at all, and then the gates it
violated, or the runner's own verdict when it violated none, are what failed it. A metric that
merely differs from the healthy fleet while something else failed the unit is not a detection:
nothing judged it. A detector is *exercised* by the built-in profiles when a built-in test of
its kind (and scope) gates its metric; an exercised detector that did not fire is *missed*.
Detectors the built-ins do not exercise are still probed directly, with a plain test of their
kind, to show the runner sees the fault.

How the tests are settled is a :class:`Method`. :data:`RUNNERS` settles one unit at a time
through the simulated runners, contract.parse and the verdict rules (harness.run_unit), with no
engine; the record — tests/scenarios/test_fault_coverage.py and docs/fault-coverage.md — runs
the built-in profiles through the engine on the simulator backend instead (its method is
tools.coverage.engine). The judging below is the same for both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import Any

from glimmer.api.test import BurnInTestSpec
from glimmer.api.threshold import to_contract
from glimmer.contract.gpu_class import Choice, choose
from glimmer.contract.kinds import kind_spec
from glimmer.contract.vocab import Phase, RunnerVerdict
from glimmer.fleet.build import build
from glimmer.fleet.generate import generate_fleet
from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology
from glimmer.sim.faults import Fault
from glimmer.sim.modes import MODE_BY_NAME, MODES, FaultMode
from glimmer.sim.runners.node import gpu_names
from glimmer.sim.twin import FleetSim
from glimmer.verdict import evaluate
from tools.coverage.detectors import OUTSIDE_BUILTINS, CoverageDetector, detectors
from tools.coverage.harness import UnitResult, builtins, run_unit

HGX64 = "hgx-64"
AI_FACTORY = "ai-factory"
N0 = "hgx-su000-node-0000"
N1 = "hgx-su000-node-0001"
FAR = ("hgx-su001-node-0005", "hgx-su001-node-0006")  # another SU, rack and leaf set


@cache
def topology(name: str) -> Topology:
    """The sweep's fleets: 64 generated HGX H100 nodes (two scalable units), or ai-factory
    (PCIe, HGX and an NVL72 rack, a scheduler and shared storage)."""
    if name == HGX64:
        return build(generate_fleet(512, "hgx", "coverage-hgx-64"), source="generated")
    return load_topology(name)


@dataclass(frozen=True)
class Scenario:
    mode: str
    fleet: str
    target: str
    affected: tuple[str, ...]  # nodes the fault reaches (Node tests run here)
    peer: str  # an unreached node: the server of every Pair test with an affected client
    healthy: tuple[str, ...]  # unreached nodes: every test must pass there

    @property
    def fault(self) -> Fault:
        return Fault(self.mode, self.target, 1.0)


def _hgx(mode: str, target: str, affected: tuple[str, ...] = (N0,)) -> Scenario:
    return Scenario(mode, HGX64, target, affected, FAR[0], FAR)


_AF_HEALTHY = ("hgx-node-0001", "pcie-node-0001")

# fmt: off
SCENARIOS: tuple[Scenario, ...] = (
    _hgx("gpu_xid_burst", f"gpu:{N0}/2"),
    _hgx("gpu_fallen_off_bus", f"gpu:{N0}/5"),
    _hgx("gpu_node_drain", f"node:{N0}"),
    _hgx("gpu_operand_unavailable", f"node:{N0}"),
    Scenario("gpu_preemption_storm", AI_FACTORY, "scheduler:scheduler-a", (),
             "pcie-node-0000", _AF_HEALTHY),
    Scenario("gpu_quota_exhaustion", AI_FACTORY, "project:scheduler-a/research", (),
             "pcie-node-0000", _AF_HEALTHY),
    _hgx("gpu_backend_congestion", "switch:backend/be-su000-rail0", (N0, N1)),
    Scenario("gpu_storage_latency", AI_FACTORY, "storage:storage-a", ("pcie-node-0000",),
             "hgx-node-0001", ("hgx-node-0001", "nvl-node-0003")),
    _hgx("gpu_cooling_fault", "rack:site-a/hgx-su000-r00", (N0, N1)),
    Scenario("gpu_leak_detected", AI_FACTORY, "rack:site-a/nvl-a", ("nvl-node-0000",),
             "hgx-node-0001", _AF_HEALTHY),
    _hgx("gpu_nvlink_degraded", f"domain:site-a/hgx-su000-r00/hgx/{N0}/default"),
    Scenario("gpu_nvswitch_tray_failure", AI_FACTORY, "tray:site-a/nvl-a/nvswitch/0",
             ("nvl-node-0000",), "hgx-node-0001", _AF_HEALTHY),
    _hgx("gpu_nvlink_error_burst", f"gpu:{N0}/3"),
    _hgx("gpu_low_pstate", f"gpu:{N0}/5"),
    _hgx("gpu_silent_data_corruption", f"gpu:{N0}/0"),
    _hgx("gpu_ecc_correctable", f"gpu:{N0}/1"),
    _hgx("gpu_ecc_uncorrectable", f"gpu:{N0}/6"),
    _hgx("gpu_row_remap", f"gpu:{N0}/4"),
    _hgx("gpu_pcie_downtrained", f"gpu:{N0}/7"),
    _hgx("nic_link_down", f"nic:{N0}/ib0"),
    _hgx("nic_link_flapping", f"nic:{N0}/ib0"),
    _hgx("nic_degraded", f"nic:{N0}/ib0"),
    _hgx("rdma_memlock_limit", f"node:{N0}"),
    _hgx("gpu_thermal_paste_degraded", f"gpu:{N0}/3"),
)
# fmt: on
SCENARIO_BY_MODE = {s.mode: s for s in SCENARIOS}


class Status(StrEnum):
    DETECTED = "detected"
    MISSED = "missed"  # exercised by the built-ins, yet nothing settled Failed/Error on it
    NOT_GATED = "not gated"  # built-ins run the kind but neither gate nor runner fail on it
    OUTSIDE = "outside"  # no built-in test of this kind (and scope)


@dataclass(frozen=True)
class DetectorResult:
    detector: CoverageDetector
    status: Status
    evidence: str  # the unit and figure that showed it, or why not
    probe: str = ""  # what a plain test of the kind saw, for detectors the built-ins miss
    failed_by: str = ""  # detected: the test and the gate (or runner verdict) that failed it


@dataclass(frozen=True)
class ModeResult:
    mode: FaultMode
    scenario: Scenario
    affected: tuple[UnitResult, ...]
    healthy: tuple[UnitResult, ...]
    detectors: tuple[DetectorResult, ...]

    @property
    def out_of_scope(self) -> bool:
        return not self.mode.detectors and bool(self.mode.scope_note)

    @property
    def detected_by(self) -> tuple[DetectorResult, ...]:
        return tuple(d for d in self.detectors if d.status is Status.DETECTED)

    def false_failures(self) -> tuple[UnitResult, ...]:
        topo = topology(self.scenario.fleet)
        return tuple(r for r in self.healthy if not settled_as_due(r, topo))


def settled_as_due(r: UnitResult, topo: Topology) -> bool:
    """A healthy unit settled as it must: Passed, or Skipped by a per-product cell
    (contract.gpu_class) that another cell of the matrix judges, and said so."""
    if r.outcome.phase is Phase.PASSED:
        return True
    spec = builtins().tests.get(r.test)
    if r.outcome.phase is not Phase.SKIPPED or spec is None or spec.runner is None:
        return False
    env = {e.name: e.value or "" for e in spec.runner.env or []}
    return choose(env, gpu_names(topo, r.nodes[0])).choice is Choice.SKIP


@dataclass(frozen=True)
class Units:
    """Where the built-in tests settle around a fault: every Node test on each node of
    ``reached`` (the fault's) and ``unreached`` (nodes it does not reach), every Pair test on
    each ``(server, client)`` of ``links``."""

    reached: tuple[str, ...]
    unreached: tuple[str, ...]
    links: tuple[tuple[str, str], ...]

    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.reached, *self.unreached)))


# Settles the built-in tests on the units given, on one fleet (the faulty one, or the healthy
# fleet of the healthy sweep).
Settle = Callable[[FleetSim, Units], list[UnitResult]]

# How one test is settled on one unit (the probes): harness.run_unit, or a run through the
# engine on the simulator backend, with the same signature.
UnitRunner = Callable[[FleetSim, str, BurnInTestSpec, Sequence[str]], UnitResult]


def per_unit(runner: UnitRunner = run_unit) -> Settle:
    """Every built-in test (each once, whichever profiles share it) settled one unit at a time
    by ``runner``."""

    def settle(twin: FleetSim, units: Units) -> list[UnitResult]:
        out = []
        for name, spec in builtins().tests.items():
            unit_list: list[tuple[str, ...]] = (
                list(units.links) if spec.scope.value == "Pair" else [(n,) for n in units.nodes]
            )
            out += [runner(twin, name, spec, unit) for unit in unit_list]
        return out

    return settle


@dataclass(frozen=True)
class Method:
    """How the sweep settles the built-in tests: around each fault (``settle``), a detector's
    kind run directly (``probe``), and the healthy fleet (``healthy``). ``words`` and
    ``healthy_words`` say how, in the coverage document."""

    words: str
    settle: Settle
    probe: UnitRunner
    healthy: Settle
    healthy_words: str


def _healthy_runner(
    twin: FleetSim, name: str, spec: BurnInTestSpec, nodes: Sequence[str]
) -> UnitResult:
    return run_unit(twin, name, spec, nodes, seed=11)


RUNNERS = Method(
    words="through the simulated runners, the contract parser and the verdict rules, one unit "
    "at a time, without the engine",
    settle=per_unit(run_unit),
    probe=run_unit,
    healthy=per_unit(_healthy_runner),
    healthy_words="every built-in test once on every node (Pair tests on neighbouring nodes)",
)


def _scenario_units(scenario: Scenario) -> Units:
    links = [(scenario.peer, n) for n in scenario.affected if n != scenario.peer]
    if len(scenario.healthy) >= 2:
        links.append((scenario.healthy[0], scenario.healthy[1]))
    return Units(scenario.affected, scenario.healthy, tuple(links))


def _gated(kind: str, metric: str, scope: str | None) -> bool:
    """A built-in test of ``kind`` (at ``scope``) has a gate on ``metric``."""
    return any(
        spec.kind == kind
        and (scope is None or spec.scope.value == scope)
        and any(t.metric == metric for t in spec.thresholds or [])
        for spec in builtins().tests.values()
    )


def gate_text(test: str, index: int | None, metric: str) -> str:
    """The gate a violation names, as the built-in test writes it (``xidEvents Equal 0``)."""
    spec = builtins().tests.get(test)
    gates = (spec.thresholds or []) if spec is not None else []
    if index is not None and 0 <= index < len(gates) and gates[index].metric == metric:
        g = gates[index]
        return f"{g.metric} {g.comparison.value} {g.value}"
    return next((f"{g.metric} {g.comparison.value} {g.value}" for g in gates if g.metric == metric),
                metric)  # fmt: skip


@dataclass(frozen=True)
class OwnGate:
    gate: str
    reason: str


def _own_gate_fails(r: UnitResult, metric: str) -> OwnGate | None:
    """The unit's own built-in gate on ``metric``, when it fails on the value the runner
    reported (None: the test does not gate the metric, or the gate holds)."""
    spec = builtins().tests.get(r.test)
    gates = [t for t in (spec.thresholds or []) if t.metric == metric] if spec else []
    if not gates:
        return None
    found = evaluate(r.parsed.metrics, r.parsed.unmeasurable, to_contract(gates)).violations
    if not found:
        return None
    return OwnGate(gate_text(r.test, None, metric), found[0].reason)


def failed_by(r: UnitResult) -> str:
    """What failed a unit: the gates it violated, else the runner's own verdict."""
    gates = [gate_text(r.test, v.index, v.metric) for v in r.outcome.violations]
    if gates:
        return ", ".join(f"`{g}`" for g in dict.fromkeys(gates))
    return f"runner {r.parsed.verdict} (exit {r.parsed.exit_code})"


def _judge(det: CoverageDetector, affected: Sequence[UnitResult]) -> tuple[Status, str, str]:
    """(status, evidence, what failed the unit when detected)."""
    specs = builtins().tests
    relevant = [
        r for r in affected
        if r.kind == det.kind and (det.scope is None or specs[r.test].scope.value == det.scope)
    ]  # fmt: skip
    if not relevant:
        where = f" at {det.scope} scope" if det.scope else ""
        return Status.OUTSIDE, f"no built-in test runs {det.kind}{where}", ""
    failed = [r for r in relevant if r.outcome.phase in (Phase.FAILED, Phase.ERROR)]
    for r in failed:
        unit = "/".join(r.nodes)
        if det.metric is None:
            by = failed_by(r)
            return (
                Status.DETECTED,
                (f"{r.test} on {unit}: {r.outcome.phase} by {by} ({r.outcome.message[:120]})"),
                f"{r.test} {by}",
            )
        for v in r.outcome.violations:
            if v.metric == det.metric:
                gate = gate_text(r.test, v.index, v.metric)
                return (
                    Status.DETECTED,
                    (f"{r.test} on {unit}: `{gate}` violated ({v.reason})"),
                    f"{r.test} `{gate}`",
                )
        # A runner that fails by itself settles the unit before any gate is evaluated. Its
        # metric still counts when the test's own gate on it fails on the reported value: that
        # gate would have failed the unit too. A metric no gate of the test judges never counts.
        own = _own_gate_fails(r, det.metric)
        if r.parsed.verdict is RunnerVerdict.FAIL and own is not None:
            return (
                Status.DETECTED,
                f"{r.test} on {unit}: runner Fail (exit {r.parsed.exit_code}: "
                f"{r.outcome.message[:100]}); its gate `{own.gate}` fails too ({own.reason})",
                f"{r.test} runner Fail + `{own.gate}`",
            )
    if det.metric is None or _gated(det.kind, det.metric, det.scope):
        phases = ", ".join(f"{r.test}:{r.outcome.phase}" for r in relevant)
        return Status.MISSED, f"exercised but not seen ({phases})", ""
    why = f"no built-in {det.kind} test gates {det.metric}"
    if failed:
        r = failed[0]
        why += f" ({r.test} on {'/'.join(r.nodes)} failed by {failed_by(r)}, not by this metric)"
    return Status.NOT_GATED, why, ""


def _probe_spec(kind: str, scope: str, fleet: Topology) -> BurnInTestSpec:
    storage = next((n.storage_cluster for n in fleet.nodes if n.storage_cluster), "")
    disk = f"/mnt/{storage.removeprefix('storage:') or 'scratch'}/burnin"
    mounts: list[dict[str, Any]] = [
        {"path": "/dev/kmsg", "mountPath": "/dev/kmsg", "type": "CharDevice"},
        {"path": "/sys", "mountPath": "/host/sys"},
        {"path": "/opt/dcgm-runtime", "mountPath": "/usr/local/dcgm"},
        {"path": disk, "mountPath": disk, "readOnly": False},
    ]
    runner: dict[str, Any] = {
        "privileged": True, "runAsUser": 0, "hostPaths": mounts,
        "env": [{"name": "DISK_IO_PATH", "value": disk},
                {"name": "BURNIN_VARIANT_PRECISION", "value": "bf16"}],
    }  # fmt: skip
    known = kind_spec(kind)
    if known is None or known.default_image is None:
        # A kind glimmer ships no image for (disk-io) runs the site's own; the engine refuses
        # the test without one.
        runner["image"] = f"registry.example.com/site/burnin-{kind}:probe"
    return BurnInTestSpec.model_validate(
        {"kind": kind, "scope": scope, "durationSeconds": 60, "hostNetwork": True, "runner": runner}
    )


def _probe(
    det: CoverageDetector, scenario: Scenario, sick: FleetSim, well: FleetSim, runner: UnitRunner
) -> str:
    """Run a plain test of the detector's kind on the first affected unit, sick and healthy."""
    if not scenario.affected or det.metric is None:
        return ""
    known = kind_spec(det.kind)
    scopes = sorted(s.value for s in known.scopes) if known else ["Node"]
    scope = det.scope or ("Node" if "Node" in scopes else scopes[0])
    spec = _probe_spec(det.kind, scope, sick.topo)
    unit = (scenario.peer, scenario.affected[0]) if scope == "Pair" else scenario.affected[:1]
    got = runner(sick, f"probe-{det.kind}", spec, unit)
    base = runner(well, f"probe-{det.kind}", spec, unit)
    a = got.parsed.metrics.get(det.metric, "absent")
    b = base.parsed.metrics.get(det.metric, "absent")
    seen = "sees it" if a != b or got.outcome.phase != base.outcome.phase else "blind"
    return f"{det.kind} ({scope}) {seen}: {det.metric}={a} vs healthy {b}, {got.outcome.phase}"


def cover(mode_name: str, method: Method = RUNNERS) -> ModeResult:
    """Inject one mode alone and settle every built-in test around it."""
    mode = MODE_BY_NAME[mode_name]
    scenario = SCENARIO_BY_MODE[mode_name]
    topo = topology(scenario.fleet)
    sick = FleetSim(topo, [scenario.fault])
    well = FleetSim(topo)
    units = _scenario_units(scenario)
    reached = set(scenario.affected)
    settled = method.settle(sick, units)
    affected = [r for r in settled if reached & set(r.nodes)]
    healthy = [r for r in settled if not reached & set(r.nodes)]
    results = []
    for det in detectors(mode):
        status, evidence, by = _judge(det, affected)
        probe = "" if status is Status.DETECTED else _probe(det, scenario, sick, well, method.probe)
        results.append(DetectorResult(det, status, evidence, probe, by))
    return ModeResult(mode, scenario, tuple(affected), tuple(healthy), tuple(results))


def cover_all(method: Method = RUNNERS) -> list[ModeResult]:
    return [cover(m.name, method) for m in MODES]


def problems(result: ModeResult) -> list[str]:
    """Everything the sweep must not see for one mode (empty when the mode is covered)."""
    found = [
        f"false {r.outcome.phase} on healthy {'/'.join(r.nodes)} in {r.test}: "
        f"{r.outcome.message[:160]}"
        for r in result.false_failures()
    ]
    name = result.mode.name
    if result.out_of_scope:
        found += [
            f"out-of-scope mode failed {r.test} on {'/'.join(r.nodes)}: {r.outcome.message}"
            for r in result.affected
            if r.outcome.phase is Phase.FAILED
        ]
        return found
    for d in result.detectors:
        if d.status is Status.MISSED:
            found.append(f"{d.detector.kind}/{d.detector.metric}: missed ({d.evidence})")
    if not result.detected_by and name not in OUTSIDE_BUILTINS:
        found.append("no detector of the built-in profiles saw it")
    if name in OUTSIDE_BUILTINS and not any("sees it" in d.probe for d in result.detectors):
        found.append("outside the built-ins, and no runner sees it even when run directly")
    return found


# ---- the healthy fleet ----------------------------------------------------------------------


@dataclass(frozen=True)
class HealthySweep:
    nodes: int
    units: int
    failures: tuple[UnitResult, ...]
    by_test: dict[str, int]
    declined: int = 0  # Skipped by a per-product cell because another cell judges the node


def healthy_sweep(gpus: int = 4096, method: Method = RUNNERS) -> HealthySweep:
    """Every built-in test on every node of a healthy generated HGX fleet (pairs: neighbours),
    with measurement noise; nothing may settle other than Passed, or Skipped in a per-product
    cell of another class."""
    topo = build(generate_fleet(gpus, "hgx", f"healthy-{gpus}"), source="generated")
    hosts = tuple(n.hostname for n in topo.nodes)
    links = tuple((hosts[i], hosts[i + 1]) for i in range(0, len(hosts) - 1, 2))
    settled = method.healthy(FleetSim(topo), Units((), hosts, links))
    counts: dict[str, int] = {}
    for r in settled:
        counts[r.test] = counts.get(r.test, 0) + 1
    failures = tuple(r for r in settled if not settled_as_due(r, topo))
    declined = sum(r.outcome.phase is Phase.SKIPPED for r in settled) - sum(
        r.outcome.phase is Phase.SKIPPED for r in failures
    )
    return HealthySweep(len(hosts), len(settled), failures, counts, declined)
