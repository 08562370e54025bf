"""The fault-coverage sweep: inject each fault mode alone, run the built-in profiles' tests on
the nodes it reaches and on nodes it does not, and say which detector saw it.

A detector (kind, metric) *detected* a mode when a built-in test of that kind, on a unit the
fault reaches, settled Failed or Error because of it: its gate on the metric was violated, or
the runner itself failed and the metric differs from the same call on the healthy fleet (the
noise is seeded per call, so only the fault can move it). A detector is *exercised* by the
built-in profiles when a built-in test of its kind (and scope) gates its metric, or its runner
fails on that metric by itself; an exercised detector that did not fire is *missed*. Detectors
the built-ins do not exercise are still probed directly, with a plain test of their kind, to
show the runner sees the fault.

This module is what tests/scenarios/test_fault_coverage.py asserts on and what
docs/fault-coverage.md is generated from; the engine-level sweep will swap :func:`run_unit`
for a run through the engine and keep the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from typing import Any

from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Phase, RunnerVerdict
from glimmer.fleet.build import build
from glimmer.fleet.generate import generate_fleet
from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology
from glimmer.sim.faults import Fault
from glimmer.sim.modes import MODE_BY_NAME, MODES, FaultMode
from glimmer.sim.runners.detectors import OUTSIDE_BUILTINS, CoverageDetector, detectors
from glimmer.sim.runners.harness import UnitResult, builtins, run_unit
from glimmer.sim.twin import FleetSim

# What each runner fails on by itself (exit 1), whatever the profile gates (§9).
SELF_GATED: dict[str, frozenset[str]] = {
    "host-health": frozenset(
        {"xidEvents", "eccErrors", "remappedRows", "pcieReplayErrors", "nicLinkDownEvents"}
    ),
    "clockprobe": frozenset({"sustainedClockPct"}),
    "thermal-soak": frozenset({"miscompares", "nonfiniteCount", "throttleEvents",
                               "sustainedClockPct"}),
    "gpu-burn": frozenset({"miscompares", "nonfiniteCount", "eccErrors"}),
    "gemm-sweep": frozenset({"maxRelativeError", "nonfiniteCount"}),
    "compute-smoke": frozenset({"maxRelError", "nonfiniteCount"}),
    "dcgm-diag": frozenset({"diagTestsFailed"}),
    "nccl": frozenset({"miscompares"}),
    "fabric-soak": frozenset({"soakFailedIterations"}),
}  # fmt: skip

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


@dataclass(frozen=True)
class ModeResult:
    mode: FaultMode
    scenario: Scenario
    affected: tuple[UnitResult, ...]
    healthy: tuple[UnitResult, ...]
    detectors: tuple[DetectorResult, ...]
    baseline: dict[tuple[str, tuple[str, ...]], UnitResult] = field(default_factory=dict)

    @property
    def out_of_scope(self) -> bool:
        return not self.mode.detectors and bool(self.mode.scope_note)

    @property
    def detected_by(self) -> tuple[DetectorResult, ...]:
        return tuple(d for d in self.detectors if d.status is Status.DETECTED)

    def false_failures(self) -> tuple[UnitResult, ...]:
        return tuple(r for r in self.healthy if r.outcome.phase is not Phase.PASSED)


def _units(spec: BurnInTestSpec, nodes: Sequence[str], peer: str) -> list[tuple[str, ...]]:
    if spec.scope.value == "Pair":
        return [(peer, n) for n in nodes if n != peer]
    return [(n,) for n in nodes]


def _healthy_units(spec: BurnInTestSpec, nodes: Sequence[str]) -> list[tuple[str, ...]]:
    if spec.scope.value == "Pair":
        return [tuple(nodes[:2])] if len(nodes) >= 2 else []
    return [(n,) for n in nodes]


# How one built-in test is settled on one unit: the simulated runners through the verdict
# rules (harness.run_unit) today; a run through the engine on the simulator backend can stand
# in with the same signature.
UnitRunner = Callable[[FleetSim, str, BurnInTestSpec, Sequence[str]], UnitResult]


def run_tests(
    twin: FleetSim,
    units_of: Callable[[BurnInTestSpec], list[tuple[str, ...]]],
    runner: UnitRunner = run_unit,
) -> list[UnitResult]:
    """Every built-in test (each once, whichever profiles share it) on the units given."""
    out = []
    for name, spec in builtins().tests.items():
        for unit in units_of(spec):
            out.append(runner(twin, name, spec, unit))
    return out


def _gated(kind: str, metric: str, scope: str | None) -> bool:
    if metric in SELF_GATED.get(kind, frozenset()):
        return True
    return any(
        spec.kind == kind
        and (scope is None or spec.scope.value == scope)
        and any(t.metric == metric for t in spec.thresholds or [])
        for spec in builtins().tests.values()
    )


def _judge(
    det: CoverageDetector,
    affected: Sequence[UnitResult],
    baseline: dict[tuple[str, tuple[str, ...]], UnitResult],
) -> tuple[Status, str]:
    specs = builtins().tests
    relevant = [
        r for r in affected
        if r.kind == det.kind and (det.scope is None or specs[r.test].scope.value == det.scope)
    ]  # fmt: skip
    if not relevant:
        where = f" at {det.scope} scope" if det.scope else ""
        return Status.OUTSIDE, f"no built-in test runs {det.kind}{where}"
    for r in relevant:
        phase = r.outcome.phase
        unit = "/".join(r.nodes)
        if phase not in (Phase.FAILED, Phase.ERROR):
            continue
        if det.metric is None:
            return Status.DETECTED, f"{r.test} on {unit}: {phase} ({r.outcome.message[:120]})"
        for v in r.outcome.violations:
            if v.metric == det.metric:
                return Status.DETECTED, f"{r.test} on {unit}: {v.reason}"
        base = baseline.get((r.test, r.nodes))
        got = r.parsed.metrics.get(det.metric)
        want = base.parsed.metrics.get(det.metric) if base else None
        runner_failed = r.parsed.verdict is RunnerVerdict.FAIL
        if runner_failed and got is not None and got != want:
            return Status.DETECTED, (
                f"{r.test} on {unit}: runner failed, {det.metric}={got} (healthy {want})"
            )
    if det.metric is None or _gated(det.kind, det.metric, det.scope):
        phases = ", ".join(f"{r.test}:{r.outcome.phase}" for r in relevant)
        return Status.MISSED, f"exercised but not seen ({phases})"
    return Status.NOT_GATED, f"no built-in {det.kind} test gates {det.metric}"


def _probe_spec(kind: str, scope: str, fleet: Topology) -> BurnInTestSpec:
    storage = next((n.storage_cluster for n in fleet.nodes if n.storage_cluster), "")
    disk = f"/mnt/{storage.removeprefix('storage:') or 'scratch'}/burnin"
    mounts: list[dict[str, Any]] = [
        {"path": "/dev/kmsg", "mountPath": "/dev/kmsg", "type": "CharDevice"},
        {"path": "/sys", "mountPath": "/host/sys"},
        {"path": "/opt/dcgm-runtime", "mountPath": "/usr/local/dcgm"},
        {"path": disk, "mountPath": disk, "readOnly": False},
    ]
    return BurnInTestSpec.model_validate(
        {
            "kind": kind, "scope": scope, "durationSeconds": 60, "hostNetwork": True,
            "runner": {"privileged": True, "runAsUser": 0, "hostPaths": mounts,
                       "env": [{"name": "DISK_IO_PATH", "value": disk},
                               {"name": "BURNIN_VARIANT_PRECISION", "value": "bf16"}]},
        }
    )  # fmt: skip


def _probe(det: CoverageDetector, scenario: Scenario, sick: FleetSim, well: FleetSim) -> str:
    """Run a plain test of the detector's kind on the first affected unit, sick and healthy."""
    if not scenario.affected or det.metric is None:
        return ""
    from glimmer.contract.kinds import kind_spec

    known = kind_spec(det.kind)
    scopes = sorted(s.value for s in known.scopes) if known else ["Node"]
    scope = det.scope or ("Node" if "Node" in scopes else scopes[0])
    spec = _probe_spec(det.kind, scope, sick.topo)
    unit = (scenario.peer, scenario.affected[0]) if scope == "Pair" else scenario.affected[:1]
    got = run_unit(sick, f"probe-{det.kind}", spec, unit)
    base = run_unit(well, f"probe-{det.kind}", spec, unit)
    a = got.parsed.metrics.get(det.metric, "absent")
    b = base.parsed.metrics.get(det.metric, "absent")
    seen = "sees it" if a != b or got.outcome.phase != base.outcome.phase else "blind"
    return f"{det.kind} ({scope}) {seen}: {det.metric}={a} vs healthy {b}, {got.outcome.phase}"


def cover(mode_name: str, runner: UnitRunner = run_unit) -> ModeResult:
    """Inject one mode alone and settle every built-in test around it."""
    mode = MODE_BY_NAME[mode_name]
    scenario = SCENARIO_BY_MODE[mode_name]
    topo = topology(scenario.fleet)
    sick = FleetSim(topo, [scenario.fault])
    well = FleetSim(topo)

    def affected_units(spec: BurnInTestSpec) -> list[tuple[str, ...]]:
        return _units(spec, scenario.affected, scenario.peer)

    affected = run_tests(sick, affected_units, runner)
    baseline = {(r.test, r.nodes): r for r in run_tests(well, affected_units, runner)}
    healthy = run_tests(sick, lambda s: _healthy_units(s, scenario.healthy), runner)
    results = []
    for det in detectors(mode):
        status, evidence = _judge(det, affected, baseline)
        probe = "" if status is Status.DETECTED else _probe(det, scenario, sick, well)
        results.append(DetectorResult(det, status, evidence, probe))
    return ModeResult(mode, scenario, tuple(affected), tuple(healthy), tuple(results), baseline)


def cover_all(runner: UnitRunner = run_unit) -> list[ModeResult]:
    return [cover(m.name, runner) for m in MODES]


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


def healthy_sweep(
    gpus: int = 4096, seed: int = 11, runner: UnitRunner | None = None
) -> HealthySweep:
    """Every built-in test on every node of a healthy generated HGX fleet (pairs: neighbours),
    with measurement noise; nothing may settle other than Passed."""
    topo = build(generate_fleet(gpus, "hgx", f"healthy-{gpus}"), source="generated")
    twin = FleetSim(topo)
    hosts = [n.hostname for n in topo.nodes]
    failures: list[UnitResult] = []
    counts: dict[str, int] = {}
    units = 0
    for name, spec in builtins().tests.items():
        unit_list: list[tuple[str, ...]]
        if spec.scope.value == "Pair":
            unit_list = [(hosts[i], hosts[i + 1]) for i in range(0, len(hosts) - 1, 2)]
        else:
            unit_list = [(h,) for h in hosts]
        for unit in unit_list:
            r = (
                runner(twin, name, spec, unit)
                if runner is not None
                else run_unit(twin, name, spec, unit, seed=seed)
            )
            units += 1
            counts[name] = counts.get(name, 0) + 1
            if r.outcome.phase is not Phase.PASSED:
                failures.append(r)
    return HealthySweep(len(hosts), units, tuple(failures), counts)
