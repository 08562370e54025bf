"""The run engine at scale on the simulator: a 1,024-node ``acceptance`` run (cap 64) and a
512-pair ``pair-network`` sweep on ``hgx-1k``, both to a verdict.

Prints the wall time (target ≤ 10 s each), the reconcile passes, and the simulated makespan
over its lower bound (⌈N / cap⌉ × the sum of the test durations; target ≤ 1.05). It only
prints: a slow machine is a finding, not a crash.
"""

from __future__ import annotations

import math
import time

from glimmer.api.run import BurnInRun
from glimmer.backends.sim.driver import drive, drive_many
from glimmer.backends.sim.fleet import fleet_backend
from glimmer.engine.reconciler import Engine
from glimmer.fleet.load import load_topology
from glimmer.plan.builtin import load_builtin
from glimmer.plan.env import execution_duration
from glimmer.sim.twin import FleetSim

WALL_TARGET = 10.0
RATIO_TARGET = 1.05


def _run(name: str, profile: str, targets: list[str], cap: int) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "profileRef": profile,
                "target": {"nodeNames": targets},
                "maxConcurrentNodes": cap,
            },
        }
    )


def _profile_seconds(profile: str) -> int:
    """Sum of the profile's execution durations (burst kinds count their budget)."""
    loaded = {item.obj.name: item.obj for item in load_builtin()}
    tests = {n: o.spec for n, o in loaded.items() if o.kind == "BurnInTest"}
    prof = loaded[profile]
    total = 0
    for entry in prof.spec.tests:
        spec = entry.inline or tests[entry.test_ref]
        total += execution_duration(spec) * spec.repeat_count
    return total


def _report(label: str, wall: float, passes: int, makespan: float, bound: float) -> None:
    ratio = makespan / bound if bound else math.nan
    print(
        f"{label}: wall {wall:.2f} s (target <= {WALL_TARGET:.0f}), passes {passes}, "
        f"makespan {makespan:.0f} s / bound {bound:.0f} s = {ratio:.3f} (target <= {RATIO_TARGET})"
    )


def acceptance_1024() -> None:
    twin = FleetSim(load_topology("hgx-1k"))
    backend = fleet_backend(twin, seed=1)
    nodes = list(backend.nodes)[:1024]
    backend.submit(_run("acceptance-1024", "acceptance", nodes, 64))
    start = time.perf_counter()
    result = drive(backend, Engine(backend), "default", "acceptance-1024")
    wall = time.perf_counter() - start
    status = result.run.status
    assert status is not None
    bound = math.ceil(len(nodes) / 64) * _profile_seconds("acceptance")
    _report(
        f"acceptance x{len(nodes)} ({status.phase.value})",
        wall,
        result.passes,
        result.simulated_seconds,
        bound,
    )


def pair_sweep_512() -> None:
    twin = FleetSim(load_topology("hgx-1k"))
    backend = fleet_backend(twin, seed=1)
    nodes = list(backend.nodes)[:1024]
    keys = []
    for i in range(0, len(nodes) - 1, 2):
        run = backend.submit(_run(f"pair-{i // 2:03d}", "pair-network", nodes[i : i + 2], 2))
        keys.append(("default", run.name))
    start = time.perf_counter()
    result = drive_many(backend, Engine(backend), keys)
    wall = time.perf_counter() - start
    phases: dict[str, int] = {}
    for key in keys:
        run = backend.get_run(*key)
        phase = run.status.phase.value if run and run.status else "?"
        phases[phase] = phases.get(phase, 0) + 1
    bound = float(_profile_seconds("pair-network"))
    _report(
        f"pair-network x{len(keys)} pairs {phases}",
        wall,
        result.passes,
        result.simulated_seconds,
        bound,
    )


if __name__ == "__main__":
    acceptance_1024()
    pair_sweep_512()
