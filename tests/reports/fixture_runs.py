"""The BurnInRun fixtures of the report tests, made by the real engine on the simulator.

Each fixture is what ``glimmer run --output json`` writes for one run: a finished (or, for the
progress fixture, an unfinished) BurnInRun. They are checked in under ``tests/fixtures/runs/``
so that the report tests and golden files do not move whenever the simulator's noise does;
regenerate them (and then the golden files) with::

    PYTHONPATH=. .venv/bin/python tests/reports/fixture_runs.py
    GLIMMER_UPDATE_GOLDEN=1 .venv/bin/pytest tests/reports -q

The runs: a failed acceptance over part of ai-factory with the demo's planted faults, a passed
pair run and a failed one (gate violations), a segmented soak (one node's windows fail), the
same soak stopped half way (progress, checkpoints), a baseline run with thresholds stripped (one
runner's own Fail), and a run with an Error and a Skip plus the synthetic ``resolve`` result of
a second, unresolvable run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from glimmer.api.dump import dump_json
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.sim.backend import SimBackend
from glimmer.backends.sim.driver import drive, run_to_completion
from glimmer.backends.sim.fleet import fleet_backend
from glimmer.engine.reconciler import Engine
from glimmer.plan.builtin import builtin_profile, builtin_tests
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim
from tools.coverage.sweep import AI_FACTORY, topology

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"

PLANTED = [
    Fault("gpu_low_pstate", "gpu:hgx-node-0001/3"),
    Fault("nic_degraded", "nic:nvl-node-0004/eth1"),
]
ACCEPTANCE_NODES = [
    "pcie-node-0000",
    "hgx-node-0001",
    "hgx-node-0002",
    *(f"nvl-node-{i:04d}" for i in range(7)),
]


def _profile(name: str, tests: list[str]) -> BurnInProfile:
    return BurnInProfile.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": name},
            "spec": {"tests": [{"testRef": t} for t in tests]},
        }
    )


def _builtin(name: str) -> BurnInProfile:
    found = builtin_profile(name)
    assert found is not None, name
    return found


def _run_object(name: str, profile: str, targets: list[str], **spec: Any) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": "lab"},
            "spec": {
                "profileRef": profile,
                "maxConcurrentNodes": 64,
                "target": {"nodeNames": targets},
                **spec,
            },
        }
    )


def _backend(
    profiles: dict[str, BurnInProfile],
    faults: list[Fault],
    tests: dict[str, BurnInTestSpec] | None = None,
) -> SimBackend:
    twin = FleetSim(topology(AI_FACTORY), faults)
    return fleet_backend(twin, seed=7, tests=tests or builtin_tests(), profiles=profiles)


def acceptance_failed() -> BurnInRun:
    backend = _backend({"acceptance": _builtin("acceptance")}, PLANTED)
    run = _run_object("accept-1", "acceptance", ACCEPTANCE_NODES)
    return run_to_completion(backend, Engine(backend), run)


def pair_passed() -> BurnInRun:
    backend = _backend({"pair-network": _builtin("pair-network")}, [])
    run = _run_object("link-5-6", "pair-network", ["nvl-node-0005", "nvl-node-0006"])
    return run_to_completion(backend, Engine(backend), run)


def pair_failed() -> BurnInRun:
    # The degraded port of nvl-node-0004 fails the link's bandwidth gates (violations).
    backend = _backend({"pair-network": _builtin("pair-network")}, PLANTED)
    run = _run_object("link-5-4", "pair-network", ["nvl-node-0005", "nvl-node-0004"])
    return run_to_completion(backend, Engine(backend), run)


def _soak(until: float | None) -> BurnInRun:
    faults = [Fault("gpu_thermal_paste_degraded", "gpu:hgx-node-0002/5")]
    backend = _backend({"soak": _builtin("soak")}, faults)
    run = _run_object("soak-1", "soak", ["hgx-node-0001", "hgx-node-0002", "nvl-node-0001"])
    if until is None:
        return run_to_completion(backend, Engine(backend), run)
    backend.submit(run)
    return drive(backend, Engine(backend), "lab", "soak-1", until=backend.t + until).run


def soak_segmented() -> BurnInRun:
    return _soak(None)


def soak_in_progress() -> BurnInRun:
    # Two hours into a four-hour soak: results still Running, metrics from checkpoints.
    return _soak(2 * 3600 + 420)


def baseline() -> BurnInRun:
    # A baseline measures: every gate is stripped, so only a runner's own verdict can fail.
    tests = {
        name: spec.model_copy(update={"thresholds": None}) for name, spec in builtin_tests().items()
    }
    profile = _profile("acceptance-baseline", ["host-fault-counters", "sustained-clock"])
    backend = _backend({"acceptance-baseline": profile}, PLANTED[:1], tests)
    targets = ["hgx-node-0001", "hgx-node-0002", "nvl-node-0000", "nvl-node-0001"]
    run = _run_object("baseline-1", "acceptance-baseline", targets, baseline=True)
    return run_to_completion(backend, Engine(backend), run)


def mixed_outcomes() -> BurnInRun:
    # compute-smoke declares a Skip on Hopper and errors on datacenter Blackwell.
    tests = {
        **builtin_tests(),
        "nvfp4-smoke": BurnInTestSpec.model_validate(
            {"kind": "compute-smoke", "scope": "Node", "durationSeconds": 60}
        ),
    }
    profile = _profile("mixed", ["host-fault-counters", "nvfp4-smoke"])
    backend = _backend({"mixed": profile}, [], tests)
    run = _run_object("mixed-1", "mixed", ["hgx-node-0002", "nvl-node-0002"])
    done = run_to_completion(backend, Engine(backend), run)
    # A synthetic ``resolve`` result only ever comes from a run that could not be planned; the
    # engine makes one here (an unknown testRef), and it is grafted onto this run so that one
    # fixture carries the node-less path beside real results.
    broken = _profile("broken", ["host-fault-counters", "no-such-test"])
    backend2 = _backend({"broken": broken}, [], tests)
    refused = run_to_completion(
        backend2, Engine(backend2), _run_object("broken-1", "broken", ["hgx-node-0002"])
    )
    assert refused.status is not None and done.status is not None
    synthetic = [r for r in refused.status.results or [] if r.synthetic]
    assert synthetic, "the unresolvable run made no synthetic result"
    done.status.results = [*(done.status.results or []), *synthetic]
    done.status.errored += len(synthetic)
    return done


FIXTURES: dict[str, Callable[[], BurnInRun]] = {
    "acceptance-failed": acceptance_failed,
    "pair-passed": pair_passed,
    "pair-failed": pair_failed,
    "soak-segmented": soak_segmented,
    "soak-in-progress": soak_in_progress,
    "baseline": baseline,
    "mixed-outcomes": mixed_outcomes,
}


def main(names: list[str]) -> None:
    RUNS.mkdir(parents=True, exist_ok=True)
    for name in names or list(FIXTURES):
        run = FIXTURES[name]()
        path = RUNS / f"{name}.json"
        path.write_text(dump_json([run]), encoding="utf-8")
        status = run.status
        phase = status.phase if status else "?"
        print(f"{path}: {phase}, {len(status.results or []) if status else 0} results")


if __name__ == "__main__":
    main(sys.argv[1:])
