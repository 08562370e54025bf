"""DCGM diagnostics levels 1–4 on one simulated node: the burn-in simulator's ``dcgm-diag``
runner, called as the certify catalog's single-node job would run ``dcgmi diag --run N``."""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.api.test import BurnInTestSpec
from glimmer.certify.category.diagnostics import diag_reason
from glimmer.certify.jobs import DcgmJob, JobLog
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


def dcgm_log(twin: FleetSim, job: DcgmJob) -> JobLog:
    """``dcgmi diag --run <level>`` on the job's node: the runner's output and exit code."""
    call = RunnerCall(
        kind="dcgm-diag",
        scope="Node",
        nodes=(job.node,),
        node=job.node,
        role="",
        rank=None,
        nranks=None,
        env={"BURNIN_DCGM_LEVEL": str(job.level)},
        duration_seconds=600,
        attempt=1,
        spec=_SPEC,
        started_at=0.0,
        seed=job.seed,
    )
    out = dcgm_diag(twin, call)
    return JobLog(out.stdout, out.exit_code, elapsed_s=out.elapsed_seconds)


def run_dcgm(twin: FleetSim, node: str, level: int, seed: int = 0) -> DiagResult:
    """``dcgmi diag --run <level>`` on ``node``, read as the diagnostics category reads it."""
    log = dcgm_log(twin, DcgmJob(node, level, seed))
    passed = log.exit_code == 0
    reason = "" if passed else diag_reason(log.text)
    return DiagResult(node, level, passed, reason, log.text, log.elapsed_s)
