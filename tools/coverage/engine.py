"""The fault-coverage sweep through the run engine on the simulator backend.

tools.coverage.sweep decides what a fault must look like and judges the settled units;
this module settles them the way a user's run does: each built-in profile is a BurnInRun that
``fleet_backend`` + ``Engine`` drive to a verdict over the fleet twin, and the finished runs'
results are what the sweep judges. The sweep itself needs no engine (its runner-level method
settles through :mod:`tools.coverage.harness`), so the engine's method is kept apart here.

Around a fault (:func:`engine_settle`): a Node-scope profile runs once over the reached and the
unreached nodes together, ``maxConcurrentNodes`` = the number of targets (a ``failFast``
profile's unreached nodes get a run of their own, so that a failure on a reached node cannot
cut them short); ``pair-network`` runs once per link. The healthy fleet: the Node-scope
profiles once each over every node with ``maxConcurrentNodes`` 64, ``pair-network`` once per
pair of neighbouring nodes. Runs whose targets do not overlap share a backend and are driven
side by side.

``python -m tools.coverage --write docs/fault-coverage.md`` regenerates docs/fault-coverage.md
with this method.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from glimmer.api.profile import BurnInProfile
from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.sim.driver import TERMINAL, drive_many
from glimmer.backends.sim.fleet import fleet_backend
from glimmer.contract.exitcode import classify_exit
from glimmer.contract.vocab import ParsedResult, Phase, RunnerVerdict
from glimmer.engine.reconciler import Engine
from glimmer.engine.terminate import UNFINISHED
from glimmer.plan import builtin as shipped
from glimmer.plan.builtin import builtin_tests
from glimmer.sim.twin import FleetSim
from glimmer.verdict import AttemptOutcome, NotEvaluated, Violation
from tools.coverage.harness import UnitResult, builtins
from tools.coverage.sweep import Method, Settle, Units

SEED = 3
NAMESPACE = "default"
HEALTHY_CAP = 64
API = "burnin.glimmer.ai/v1alpha1"


@dataclass(frozen=True)
class Planned:
    """One BurnInRun to drive: its name, profile, target nodes (in order) and node cap."""

    name: str
    profile: str
    targets: tuple[str, ...]
    cap: int


def burnin_run(planned: Planned) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInRun",
            "metadata": {"name": planned.name, "namespace": NAMESPACE},
            "spec": {
                "profileRef": planned.profile,
                "maxConcurrentNodes": planned.cap,
                "target": {"nodeNames": list(planned.targets)},
            },
        }
    )


def _batches(planned: Sequence[Planned]) -> list[list[Planned]]:
    """Runs grouped, in order, so that no two runs of a group share a node."""
    batches: list[tuple[set[str], list[Planned]]] = []
    for p in planned:
        for used, batch in batches:
            if used.isdisjoint(p.targets):
                used.update(p.targets)
                batch.append(p)
                break
        else:
            batches.append((set(p.targets), [p]))
    return [batch for _, batch in batches]


def drive_runs(
    twin: FleetSim,
    planned: Sequence[Planned],
    profiles: Mapping[str, BurnInProfile],
    tests: Mapping[str, BurnInTestSpec],
) -> dict[str, BurnInRun]:
    """Drive every run to its end: each group of node-disjoint runs on a fresh simulator
    backend over ``twin``, side by side. The same runs give the same executions (names, seeds,
    start times) on any twin of the same fleet."""
    done: dict[str, BurnInRun] = {}
    for batch in _batches(planned):
        backend = fleet_backend(twin, seed=SEED, tests=tests, profiles=profiles)
        for p in batch:
            backend.submit(burnin_run(p))
        drive_many(backend, Engine(backend), [(NAMESPACE, p.name) for p in batch])
        for p in batch:
            run = backend.get_run(NAMESPACE, p.name)
            assert run is not None and run.status is not None, p.name
            assert run.status.phase in TERMINAL, f"{p.name} ended {run.status.phase}"
            done[p.name] = run
    return done


def _verdict(result: TestResult) -> tuple[RunnerVerdict, int]:
    """The runner's own verdict, from the exit code the engine recorded (a Pair's attempt
    carries the combined ends' deciding code)."""
    if result.phase is Phase.SKIPPED:
        return RunnerVerdict.SKIP, 2
    attempts = result.attempts or []
    code = attempts[-1].exit_code if attempts else None
    if code is None or code < 0:
        return RunnerVerdict.ERROR, -1
    return classify_exit(code, "").verdict, code


def unit_result(result: TestResult, test: str | None = None) -> UnitResult:
    """One engine result as the coverage module's settled unit."""
    verdict, code = _verdict(result)
    metrics = dict(result.metrics or result.aggregated_metrics or {})
    message = result.message or ""
    parsed = ParsedResult(
        verdict=verdict,
        exit_code=code,
        metrics=metrics,
        unmeasurable=frozenset(result.unmeasurable or ()),
        message=message,
    )
    outcome = AttemptOutcome(
        phase=result.phase,
        message=message,
        metrics=metrics,
        violations=tuple(
            Violation(v.index, v.metric, v.kind or "", v.cause or "", v.reason or "")
            for v in result.violations or []
        ),
        not_evaluated=tuple(NotEvaluated(n.metric, n.reason) for n in result.not_evaluated or []),
        unmeasurable=tuple(sorted(result.unmeasurable or ())),
    )
    nodes = tuple(result.nodes or ())
    return UnitResult(test or result.name, result.kind, nodes, parsed, outcome, ())


def settled_units(run: BurnInRun) -> list[UnitResult]:
    """A finished run's units. A synthetic result (the plan refused, admission) is a broken
    sweep, not a verdict; a unit the run's own end cut short (failFast) has no verdict."""
    assert run.status is not None
    out = []
    for r in run.status.results or []:
        assert not r.synthetic or r.phase is Phase.PASSED, f"{run.name}: {r.name}: {r.message}"
        if r.synthetic or r.message == UNFINISHED:
            continue
        out.append(unit_result(r))
    return out


def _scopes(profile: str) -> set[str]:
    specs = builtins().tests
    return {specs[t].scope.value for t in builtins().profiles[profile]}


def builtin_profile(name: str) -> BurnInProfile:
    """The shipped profile ``name`` (it must exist)."""
    found = shipped.builtin_profile(name)
    assert found is not None, name
    return found


def plan_runs(units: Units, cap: int | None) -> list[Planned]:
    """The runs that settle every built-in profile on ``units`` (``cap`` None: all targets at
    once)."""
    planned: list[Planned] = []
    for profile in builtins().profiles:
        scopes = _scopes(profile)
        if scopes == {"Pair"}:
            planned += [
                Planned(f"{profile}-{i}", profile, link, 2) for i, link in enumerate(units.links)
            ]
            continue
        assert scopes == {"Node"}, f"{profile}: scopes {scopes}"
        fail_fast = builtin_profile(profile).spec.fail_fast
        groups = [units.reached, units.unreached] if fail_fast else [units.nodes]
        for i, nodes in enumerate(g for g in groups if g):
            planned.append(Planned(f"{profile}-{i}", profile, nodes, cap or len(nodes)))
    return planned


def engine_settle(cap: int | None = None) -> Settle:
    """Every built-in profile through the engine on ``units``; the units of each run, in plan
    order (a test two profiles share settles once in each)."""

    def settle(twin: FleetSim, units: Units) -> list[UnitResult]:
        planned = plan_runs(units, cap)
        profiles = {p.profile: builtin_profile(p.profile) for p in planned}
        runs = drive_runs(twin, planned, profiles, builtin_tests())
        return [u for p in planned for u in settled_units(runs[p.name])]

    return settle


def engine_unit(
    twin: FleetSim, name: str, spec: BurnInTestSpec, nodes: Sequence[str]
) -> UnitResult:
    """One test on one unit, as a one-test profile run through the engine (the probes)."""
    profile = BurnInProfile.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInProfile",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"tests": [{"testRef": name}]},
        }
    )
    planned = Planned(name, name, tuple(nodes), len(nodes))
    run = drive_runs(twin, [planned], {name: profile}, {name: spec})[name]
    found = settled_units(run)
    assert len(found) == 1, f"{name} on {nodes}: {found}"
    return found[0]


ENGINE = Method(
    words="through the run engine on the simulator backend (`fleet_backend` + `Engine`, "
    "tools.coverage.engine): each built-in profile runs once as a BurnInRun over "
    "the reached and the unreached nodes together, `maxConcurrentNodes` = the number of targets "
    "(a `failFast` profile's unreached nodes get a run of their own, so a failure on a reached "
    "node cannot cut them short), `pair-network` once per link; the finished runs' results are "
    "judged, so a test two profiles share (host-fault-counters) settles once in each; a kind "
    "run directly (below) is a one-test profile run the same way",
    settle=engine_settle(),
    probe=engine_unit,
    healthy=engine_settle(HEALTHY_CAP),
    healthy_words="through the engine, `acceptance`, `smoke` and `soak` as one run each over "
    f"every node with `maxConcurrentNodes` {HEALTHY_CAP}, `pair-network` as one run per pair of "
    "neighbouring nodes",
)
