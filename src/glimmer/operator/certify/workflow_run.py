"""A Workflow's work, run by the certification core in replay (issue 17, decision 2).

Each reconcile builds a fresh :class:`~glimmer.certify.replay.ReplaySubstrate` over the
Workflow's Job-CR ledger and the nodes discovered on its first reconcile, and runs the core
from the start: a finished Job answers with its frozen outcome, the first unfinished ones are
created (create-if-absent by name) and :class:`~glimmer.certify.replay.JobsPending` ends the
reconcile; when the core returns, the category's result is the Workflow's.

A Certification's Workflow runs its category (:func:`glimmer.certify.run.run_category`); a
WorkloadRun's runs its workload over groups of ``trainer.numNodes`` nodes (the orchestration
topology when set), once per iteration, judged by the exit code (:func:`run_workload`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from glimmer.certify.grouping import NodeInfo, partition
from glimmer.certify.jobs import TrainingJob
from glimmer.certify.platform.walk import get_path
from glimmer.certify.result import WORKLOAD, CategoryResult, FailedNode, GroupRun, dedupe
from glimmer.certify.substrate import Substrate
from glimmer.errors import InputError
from glimmer.operator.certify.workflow_discovery import Refused

WORKLOAD_DOMAIN = "workload"


def nodes_per_job(spec: Any, available: int) -> int:
    """``trainer.numNodes`` of the job template (below 1: every node); more than there are →
    :class:`Refused` ``PartitionError``."""
    wanted = get_path(spec, "jobTemplate", "spec", "workload", "trainJob", "trainer", "numNodes")
    if not isinstance(wanted, int) or wanted < 1:
        return available
    if wanted > available:
        raise Refused(
            "PartitionError",
            f"Not enough schedulable nodes: need {wanted}, found {available}. Set nodesPerJob "
            f"to {available}, or narrow the target to one architecture, or lower gpusPerNode",
        )
    return wanted


def run_workload(
    substrate: Substrate,
    name: str,
    spec: Any,
    nodes: Sequence[NodeInfo],
    on_iteration: Callable[[int, Sequence[CategoryResult]], None] | None = None,
) -> CategoryResult:
    """Every group once per iteration, all groups of an iteration at once; ``on_iteration``
    as :func:`glimmer.certify.run.run_category`'s (told no results: this one result holds
    every iteration's groups)."""
    orch = spec.get("orchestration") or {}
    npj = nodes_per_job(spec, len(nodes))
    topology = orch.get("topology") or {}
    try:
        groups = partition(
            nodes,
            npj,
            topology.get("topologyKey") or None,
            strict_domain=bool(topology.get("strictDomain")),
        )
    except InputError as e:
        raise Refused("PartitionError", e.message) from None
    runs: list[GroupRun] = []
    failed: list[FailedNode] = []
    iterations = max(1, int(orch.get("iterations") or 1))
    for i in range(1, iterations + 1):
        if on_iteration is not None:
            on_iteration(i, ())
        jobs = [TrainingJob(g.name, g.nodes) for g in groups]
        for g, log in zip(groups, substrate.run_all(jobs), strict=True):
            passed = log.exit_code == 0
            why = log.error or f"exit code {log.exit_code}"
            runs.append(
                GroupRun(
                    g.name,
                    g.nodes,
                    "exitCode",
                    passed,
                    float(log.exit_code),
                    reason="" if passed else why,
                    failure="" if passed else WORKLOAD,
                )
            )
            if not passed:
                failed += [FailedNode(n, WORKLOAD, why) for n in g.nodes]
    bad = [r for r in runs if not r.passed]
    return CategoryResult(
        WORKLOAD_DOMAIN,
        name,
        "Failed" if bad else "Succeeded",
        "full-scale",
        npj,
        0.0,
        None,
        tuple(runs),
        tuple(dedupe(failed)),
        _why(bad),
    )


def _why(bad: Sequence[GroupRun]) -> str:
    """The failure reason: why the first failed job failed (the Workflow's Failed message
    already counts the groups and iterations, :func:`~glimmer.operator.certify.workflow.
    failed_message`), and how many more failed."""
    if not bad:
        return ""
    more = f" (and {len(bad) - 1} more failed jobs)" if len(bad) > 1 else ""
    return f"{bad[0].name}: {bad[0].reason}{more}"
