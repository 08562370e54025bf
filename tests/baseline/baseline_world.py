"""Building runs for the baseline tests: hand-made ones (exact metrics) and simulated ones (the
engine on the simulator backend over a generated fleet)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.sim.driver import run_to_completion
from glimmer.backends.sim.fleet import fleet_backend
from glimmer.baseline.suite import Suite
from glimmer.engine.reconciler import Engine
from glimmer.fleet.build import build
from glimmer.fleet.generate import generate_fleet
from glimmer.fleet.topology import Topology
from glimmer.plan.builtin import builtin_profile, builtin_tests
from glimmer.sim.faults import Fault
from glimmer.sim.twin import FleetSim

API = "burnin.glimmer.ai/v1alpha1"
H100 = "NVIDIA-H100-80GB-HBM3"
GB200 = "NVIDIA-GB200"


@dataclass(frozen=True)
class R:
    """One result of a hand-made run."""

    test: str
    nodes: tuple[str, ...]
    metrics: dict[str, str] = field(default_factory=dict)
    na: tuple[str, ...] = ()
    phase: str = "Passed"
    kind: str = "clockprobe"
    scope: str = "Node"


def fingerprint(product: str) -> str:
    return f"kernel=6.8 os=Ubuntu 24.04 LTS arch=x86_64 nvidia.com/gpu.product={product}"


def make_run(
    name: str,
    results: Sequence[R],
    *,
    products: dict[str, str] | None = None,
    baseline: bool = True,
    phase: str = "Passed",
) -> BurnInRun:
    """A finished run with exactly these results; every node's product defaults to H100."""
    nodes = sorted({n for r in results for n in r.nodes})
    prints = {n: fingerprint((products or {}).get(n, H100)) for n in nodes}
    status: dict[str, Any] = {
        "phase": phase,
        "fingerprint": prints,
        "results": [
            {
                "name": r.test,
                "kind": r.kind,
                "scope": r.scope,
                "phase": r.phase,
                "nodes": list(r.nodes),
                "metrics": r.metrics,
                **({"unmeasurable": list(r.na)} if r.na else {}),
            }
            for r in results
        ],
    }
    return BurnInRun.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "profileRef": "p",
                "baseline": baseline,
                "target": {"nodeNames": nodes},
            },
            "status": status,
        }
    )


def suite_of(
    tests: dict[str, dict[str, Any]], entries: list[dict[str, Any]], name: str = "p"
) -> Suite:
    """A suite from wire-form test specs and profile entries."""
    profile = BurnInProfile.model_validate(
        {"apiVersion": API, "kind": "BurnInProfile", "metadata": {"name": name},
         "spec": {"tests": entries}}
    )  # fmt: skip
    return Suite(profile, {n: BurnInTestSpec.model_validate(s) for n, s in tests.items()})


@cache
def hgx_fleet(nodes: int = 48) -> Topology:
    """A generated fleet of ``nodes`` HGX H100 nodes (eight GPUs each): one GPU product."""
    return build(generate_fleet(nodes * 8, "hgx", f"baseline-hgx-{nodes}"), source="generated")


def acceptance() -> Suite:
    """The built-in acceptance profile with the built-in tests."""
    profile = builtin_profile("acceptance")
    assert profile is not None
    return Suite(profile, builtin_tests())


def simulate(
    topo: Topology,
    suite: Suite,
    *,
    seed: int,
    name: str,
    baseline: bool = False,
    faults: Sequence[Fault] = (),
) -> BurnInRun:
    """Run ``suite`` on every node of ``topo`` through the engine on the simulator."""
    twin = FleetSim(topo, list(faults))
    profile = suite.profile
    backend = fleet_backend(
        twin, seed=seed, tests=dict(suite.tests), profiles={profile.name: profile}
    )
    run = BurnInRun.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "profileRef": profile.name,
                "maxConcurrentNodes": 64,
                "baseline": baseline,
                "target": {"nodeNames": [n.hostname for n in topo.nodes]},
            },
        }
    )
    return run_to_completion(backend, Engine(backend), run)
