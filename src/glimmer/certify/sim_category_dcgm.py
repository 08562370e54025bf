"""A diagnostics category on the simulated fleet: one DCGM job per node at the entry's level;
a failed node is named with the subtests that failed."""

from __future__ import annotations

from glimmer.certify.grouping import NodeInfo
from glimmer.certify.sim_dcgm import run_dcgm
from glimmer.certify.sim_result import WORKLOAD, CategoryResult, FailedNode, GroupRun, dedupe
from glimmer.certify.sim_spec import Category
from glimmer.sim.twin import FleetSim


def run_diagnostics(
    twin: FleetSim, cat: Category, nodes: list[NodeInfo], seed: int
) -> CategoryResult:
    """Run ``dcgmi diag`` at the category's level on every node."""
    level = cat.level
    runs: list[GroupRun] = []
    failed: list[FailedNode] = []
    longest = 0.0
    for n in nodes:
        r = run_dcgm(twin, n.name, level, seed)
        longest = max(longest, r.elapsed_s)
        runs.append(
            GroupRun(
                f"dcgm-{n.name}",
                (n.name,),
                "dcgmLevel",
                r.passed,
                float(level),
                path="node",
                reason=r.reason,
                failure="" if r.passed else WORKLOAD,
            )
        )
        if not r.passed:
            failed.append(FailedNode(n.name, WORKLOAD, f"dcgmi diag --run {level}: {r.reason}"))
    bad = [r for r in runs if not r.passed]
    return CategoryResult(
        cat.domain,
        cat.variant,
        "Failed" if bad else "Succeeded",
        "intra-node",
        1,
        longest,
        None,
        tuple(runs),
        tuple(dedupe(failed)),
        f"{len(bad)} of {len(runs)} nodes failed DCGM level {level}" if bad else "",
    )
