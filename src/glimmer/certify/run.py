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
"""

from __future__ import annotations

from glimmer.certify.category.communication import run_communication
from glimmer.certify.category.diagnostics import run_diagnostics
from glimmer.certify.category.training import run_training_category
from glimmer.certify.grouping import RACK_LABEL, NodeInfo
from glimmer.certify.result import CategoryResult, CertResult
from glimmer.certify.spec import Category, CertSpec
from glimmer.certify.substrate import Substrate
from glimmer.certify.target import arch_of, majority_arch, no_target, select, unknown_name


def certify(substrate: Substrate, spec: CertSpec, *, seed: int = 0) -> CertResult:
    """Run ``spec`` on ``substrate``; the result document. ``seed`` goes into every job (a
    simulated substrate's noise follows it) and into the result."""
    every = substrate.nodes()
    unnamed = unknown_name(substrate.name, every, spec)
    if unnamed is not None:
        raise unnamed
    targeted = select(every, spec)
    if not targeted:
        raise no_target(substrate.name, every, spec, substrate.taint_note)
    arch = majority_arch(targeted)
    nodes = [n for n in targeted if arch_of(n) == arch]
    # By name, in a set: testing each NodeInfo against the list compared dataclasses pairwise,
    # quadratic in the fleet (most of a 16k-node certification's time).
    kept = {n.name for n in nodes}
    excluded = tuple(n.name for n in targeted if n.name not in kept)
    reason = (
        f"target set has more than one GPU architecture; certified {arch} only" if excluded else ""
    )
    cats = tuple(_category(substrate, c, nodes, seed) for c in spec.categories)
    return CertResult(
        name=spec.name,
        fleet=substrate.name,
        gpu=arch,
        total_nodes=len(nodes),
        excluded_nodes=excluded,
        exclusion_reason=reason,
        categories=cats,
        node_racks={n.name: n.labels.get(RACK_LABEL, "") for n in nodes},
        seed=seed,
        platform=substrate.platform,
    )


def _category(
    substrate: Substrate, cat: Category, nodes: list[NodeInfo], seed: int
) -> CategoryResult:
    if cat.kind == "nccl":
        return run_communication(substrate, cat, nodes, seed)
    if cat.kind == "dcgm":
        return run_diagnostics(substrate, cat, nodes, seed)
    return run_training_category(substrate, cat, nodes, seed)
