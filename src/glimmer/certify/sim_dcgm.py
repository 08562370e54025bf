"""DCGM diagnostics levels 1–4 on one simulated node: the burn-in simulator's ``dcgm-diag``
runner, called as the certify catalog's single-node job would run ``dcgmi diag --run N``."""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.api.test import BurnInTestSpec
from glimmer.sim.runners.call import RunnerCall
from glimmer.sim.runners.host import dcgm_diag
from glimmer.sim.twin import FleetSim

# The catalog's dcgm job mounts the site DCGM (§5.3 dcgm-level4: privileged, hostNetwork).
_SPEC = BurnInTestSpec.model_validate(
    {
        "kind": "dcgm-diag",
        "scope": "Node",
        "durationSeconds": 600,
        "hostNetwork": True,
        "runner": {
            "privileged": True,
            "runAsUser": 0,
            "hostPaths": [{"path": "/opt/dcgm-runtime", "mountPath": "/usr/local/dcgm"}],
        },
    }
)


@dataclass(frozen=True)
class DiagResult:
    node: str
    level: int
    passed: bool
    reason: str  # the runner's final line after its marker, e.g. "1 subtest(s) failed: …"
    log: str
    elapsed_s: float


def run_dcgm(twin: FleetSim, node: str, level: int, seed: int = 0) -> DiagResult:
    """``dcgmi diag --run <level>`` on ``node``."""
    call = RunnerCall(
        kind="dcgm-diag",
        scope="Node",
        nodes=(node,),
        node=node,
        role="",
        rank=None,
        nranks=None,
        env={"BURNIN_DCGM_LEVEL": str(level)},
        duration_seconds=600,
        attempt=1,
        spec=_SPEC,
        started_at=0.0,
        seed=seed,
    )
    out = dcgm_diag(twin, call)
    last = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else ""
    _, _, why = last.partition(": ")
    passed = out.exit_code == 0
    reason = "" if passed else (why or last)
    return DiagResult(node, level, passed, reason, out.stdout, out.elapsed_seconds)
