"""A diagnostics category: one DCGM job per node at the entry's level; a failed node is named
with the subtests that failed."""

from __future__ import annotations

from glimmer.certify.grouping import NodeInfo
from glimmer.certify.jobs import DcgmJob
from glimmer.certify.result import WORKLOAD, CategoryResult, FailedNode, GroupRun, dedupe
from glimmer.certify.spec import Category
from glimmer.certify.substrate import Substrate, run_jobs


def diag_reason(log: str) -> str:
    """Why ``dcgmi diag`` failed: its final line after the marker (``FAIL: 1 subtest(s) failed:
    …`` gives ``1 subtest(s) failed: …``), else the whole final line."""
    last = log.strip().splitlines()[-1] if log.strip() else ""
    _, _, why = last.partition(": ")
    return why or last


def run_diagnostics(
    substrate: Substrate, cat: Category, nodes: list[NodeInfo], seed: int
) -> CategoryResult:
    """Run ``dcgmi diag`` at the category's level on every node."""
    level = cat.level
    runs: list[GroupRun] = []
    failed: list[FailedNode] = []
    longest = 0.0
    # One job per node, each independent of the others: a substrate may run them side by side.
    logs = run_jobs(substrate, [DcgmJob(n.name, level, seed) for n in nodes])
    for n, log in zip(nodes, logs, strict=True):
        passed = log.exit_code == 0
        reason = "" if passed else diag_reason(log.text)
        longest = max(longest, log.elapsed_s)
        runs.append(
            GroupRun(
                f"dcgm-{n.name}",
                (n.name,),
                "dcgmLevel",
                passed,
                float(level),
                path="node",
                reason=reason,
                failure="" if passed else WORKLOAD,
            )
        )
        if not passed:
            failed.append(FailedNode(n.name, WORKLOAD, f"dcgmi diag --run {level}: {reason}"))
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
