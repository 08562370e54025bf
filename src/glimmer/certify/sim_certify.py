"""A certification on the simulated fleet: every category over topology-aware groups, the
logs read by the real parsers, the verdicts of §7.5, and isolation of failing groups.

Order of work (specs/certify.md §3.1–3.2, §7): select the target nodes, keep the majority GPU
architecture (others are excluded and the result is at best INCOMPLETE), then run the
categories in list order, continuing after a failure. Communication categories isolate the
nodes of a failed run (§7.4) so a report names nodes, not groups; diagnostics run one job per
node; training judges goodput and attributes a failed job to the node its failure log names.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from glimmer.certify.catalog.gpu import parse_product
from glimmer.certify.grouping import PRODUCT_LABEL, RACK_LABEL, NodeInfo, fleet_nodes
from glimmer.certify.sim_category_dcgm import run_diagnostics
from glimmer.certify.sim_category_nccl import run_communication
from glimmer.certify.sim_category_training import run_training_category
from glimmer.certify.sim_result import CategoryResult, CertResult
from glimmer.certify.sim_spec import Category, CertSpec
from glimmer.errors import InputError
from glimmer.sim.twin import FleetSim


def select(nodes: Sequence[NodeInfo], spec: CertSpec) -> list[NodeInfo]:
    """Nodes matching the target: every nodeSelector label and every matchExpression (AND),
    then the nodeNames filter (§2.1)."""
    out = [
        n
        for n in nodes
        if all(n.labels.get(k) == v for k, v in spec.node_selector.items())
        and all(r.matches(n.labels) for r in spec.match_expressions)
    ]
    if spec.node_names:
        names = set(spec.node_names)
        out = [n for n in out if n.name in names]
    return sorted(out, key=lambda n: n.name)


def arch_of(node: NodeInfo) -> str:
    """The GPU architecture of a node's product label (h100, gb200 …); "" when unlabelled."""
    return parse_product(node.labels.get(PRODUCT_LABEL, ""))


def majority_arch(nodes: Sequence[NodeInfo]) -> str:
    """The architecture most nodes carry; a tie keeps the earliest node's; unlabelled nodes do
    not vote (§9.2 scenario 31)."""
    counts = Counter(a for a in map(arch_of, nodes) if a)
    if not counts:
        return ""
    best = max(counts.values())
    return next(a for a in map(arch_of, nodes) if a and counts[a] == best)


def certify(
    twin: FleetSim, spec: CertSpec, *, seed: int = 0, faults: Sequence[str] = ()
) -> CertResult:
    """Run ``spec`` on ``twin``; the result document."""
    every = fleet_nodes(twin.topo)
    targeted = select(every, spec)
    if not targeted:
        raise InputError(
            f"no node of fleet {twin.topo.name!r} matches the target of Certification/{spec.name}"
        )
    arch = majority_arch(targeted)
    nodes = [n for n in targeted if arch_of(n) == arch]
    excluded = tuple(n.name for n in targeted if n not in nodes)
    reason = (
        f"target set has more than one GPU architecture; certified {arch} only" if excluded else ""
    )
    cats = tuple(_category(twin, c, nodes, seed) for c in spec.categories)
    return CertResult(
        name=spec.name,
        fleet=twin.topo.name,
        gpu=arch,
        total_nodes=len(nodes),
        excluded_nodes=excluded,
        exclusion_reason=reason,
        categories=cats,
        node_racks={n.name: n.labels.get(RACK_LABEL, "") for n in nodes},
        faults=tuple(faults),
        seed=seed,
    )


def _category(twin: FleetSim, cat: Category, nodes: list[NodeInfo], seed: int) -> CategoryResult:
    if cat.kind == "nccl":
        return run_communication(twin, cat, nodes, seed)
    if cat.kind == "dcgm":
        return run_diagnostics(twin, cat, nodes, seed)
    return run_training_category(twin, cat, nodes, seed)
