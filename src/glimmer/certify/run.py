"""A certification over a substrate: every category over topology-aware groups, the logs read
by the real parsers, the verdicts of §7.5, and isolation of failing groups.

Order of work (specs/certify.md §3.1–3.2, §7): select the target nodes (labels, names, taints;
cordoned nodes only when the target opts in), keep the majority GPU
architecture (others are excluded and the result is at best INCOMPLETE), then run the
categories in list order, continuing after a failure. Communication categories isolate the
nodes of a failed run (§7.4) so a report names nodes, not groups; diagnostics run one job per
node; training judges goodput and throughput per GPU, and names the node a failed job's log
names, else isolates the job's nodes as a failed collective's are.

Nothing here knows which substrate it runs on (:class:`~glimmer.certify.substrate.Substrate`).
The three steps are public because a cluster takes them apart (issue 17): the Certification
selects the target once (:func:`target_nodes`), each Workflow runs its category in replay
(:func:`run_category` over :class:`~glimmer.certify.replay.ReplaySubstrate`), and the report is
assembled from the categories' results by the same :func:`cert_result` the direct path uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from glimmer.certify.category.communication import run_communication
from glimmer.certify.category.diagnostics import run_diagnostics
from glimmer.certify.category.training import run_training_category
from glimmer.certify.grouping import RACK_LABEL, NodeInfo
from glimmer.certify.result import CategoryResult, CertResult, IterationRun, dedupe
from glimmer.certify.spec import Category, CertSpec
from glimmer.certify.substrate import Substrate
from glimmer.certify.target import arch_of, majority_arch, no_target, select, unknown_name


@dataclass(frozen=True)
class Targeted:
    """The nodes a certification certifies (the majority architecture of its target), and
    the targeted nodes it leaves out, with why."""

    gpu: str
    nodes: tuple[NodeInfo, ...]
    excluded: tuple[str, ...] = ()
    exclusion_reason: str = ""


def target_nodes(
    fleet: str, every: Sequence[NodeInfo], spec: CertSpec, taint_note: str = ""
) -> Targeted:
    """The target of ``spec`` among the nodes ``every`` of ``fleet``; InputError when a named
    node is unknown or nothing is selected (``taint_note`` as Substrate.taint_note)."""
    unnamed = unknown_name(fleet, every, spec)
    if unnamed is not None:
        raise unnamed
    targeted = select(every, spec)
    if not targeted:
        raise no_target(fleet, every, spec, taint_note)
    arch = majority_arch(targeted)
    nodes = tuple(n for n in targeted if arch_of(n) == arch)
    # By name, in a set: testing each NodeInfo against the list compared dataclasses pairwise,
    # quadratic in the fleet (most of a 16k-node certification's time).
    kept = {n.name for n in nodes}
    excluded = tuple(n.name for n in targeted if n.name not in kept)
    reason = (
        f"target set has more than one GPU architecture; certified {arch} only" if excluded else ""
    )
    return Targeted(arch, nodes, excluded, reason)


def cert_result(
    spec: CertSpec,
    fleet: str,
    target: Targeted,
    categories: Sequence[CategoryResult],
    *,
    seed: int,
    platform: str,
) -> CertResult:
    """The result document of ``spec`` on ``target`` from its categories' results, in the
    spec's order: the one assembly of the direct path and the cluster's report."""
    return CertResult(
        name=spec.name,
        fleet=fleet,
        gpu=target.gpu,
        total_nodes=len(target.nodes),
        excluded_nodes=target.excluded,
        exclusion_reason=target.exclusion_reason,
        categories=tuple(categories),
        node_racks={n.name: n.labels.get(RACK_LABEL, "") for n in target.nodes},
        seed=seed,
        platform=platform,
    )


def certify(substrate: Substrate, spec: CertSpec, *, seed: int = 0) -> CertResult:
    """Run ``spec`` on ``substrate``; the result document. ``seed`` goes into every job (a
    simulated substrate's noise follows it) and into the result."""
    target = target_nodes(substrate.name, substrate.nodes(), spec, substrate.taint_note)
    nodes = list(target.nodes)
    cats = [run_category(substrate, c, nodes, seed) for c in spec.categories]
    return cert_result(spec, substrate.name, target, cats, seed=seed, platform=substrate.platform)


def iterations_of(cat: Category) -> int:
    """How many times ``cat`` runs: its repeatCount, but a diagnosis once. A diagnosis repeats
    its collective over the rounds it needs to name a node and ends on a per-node verdict
    (§3.2 handleIterationComplete hands a diagnose Workflow to §7.3, never back to the next
    iteration); running it again would re-screen nodes it already cleared or named."""
    return 1 if cat.options.test_scale == "diagnose" else max(cat.options.iterations, 1)


def run_category(
    substrate: Substrate,
    cat: Category,
    nodes: list[NodeInfo],
    seed: int,
    on_iteration: Callable[[int, Sequence[CategoryResult]], None] | None = None,
) -> CategoryResult:
    """Run one category over the certified ``nodes``, every iteration of it
    (:func:`iterations_of`); ``on_iteration(i, done)`` is told as iteration ``i`` starts, with
    the results of those before it (a Workflow's status follows them)."""
    runs: list[CategoryResult] = []
    for i in range(1, iterations_of(cat) + 1):
        if on_iteration is not None:
            on_iteration(i, tuple(runs))
        runs.append(_run_once(substrate, cat, nodes, seed))
    return over_iterations(runs)


def over_iterations(runs: Sequence[CategoryResult]) -> CategoryResult:
    """One category's result from its iterations: failed when any failed, naming every node
    any failed (a node that passed once and failed later is not healthy), the last
    iteration's groups and figures (§3.2: the final iteration stays in ``groups``), the
    runtime of all. One iteration is its own result."""
    if len(runs) == 1:
        return runs[0]
    last = runs[-1]
    failed = [(i, r) for i, r in enumerate(runs, 1) if not r.passed]
    why = "; ".join(
        f"iteration {i}/{len(runs)}: {r.failure_reason}" for i, r in failed if r.failure_reason
    )
    return replace(
        last,
        status="Failed" if failed else last.status,
        failed_nodes=tuple(dedupe([f for r in runs for f in r.failed_nodes])),
        failure_reason=why,
        runtime_s=sum(r.runtime_s for r in runs),
        iterations=tuple(IterationRun(i, r.status, r.runtime_s) for i, r in enumerate(runs, 1)),
    )


def _run_once(
    substrate: Substrate, cat: Category, nodes: list[NodeInfo], seed: int
) -> CategoryResult:
    if cat.kind == "nccl":
        return run_communication(substrate, cat, nodes, seed)
    if cat.kind == "dcgm":
        return run_diagnostics(substrate, cat, nodes, seed)
    return run_training_category(substrate, cat, nodes, seed)
