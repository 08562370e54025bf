"""A certification on the simulated fleet: every category over topology-aware groups, the
logs read by the real parsers, the verdicts of §7.5, and isolation of failing groups.

Order of work (specs/certify.md §3.1–3.2, §7): select the target nodes (labels, names, taints;
cordoned nodes only when the target opts in), keep the majority GPU
architecture (others are excluded and the result is at best INCOMPLETE), then run the
categories in list order, continuing after a failure. Communication categories isolate the
nodes of a failed run (§7.4) so a report names nodes, not groups; diagnostics run one job per
node; training judges goodput and throughput per GPU, and names the node a failed job's log
names, else isolates the job's nodes as a failed collective's are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from glimmer.certify.catalog.gpu import parse_product
from glimmer.certify.grouping import (
    PRODUCT_LABEL,
    RACK_LABEL,
    UNSCHEDULABLE_TAINT,
    NodeInfo,
    Taint,
    fleet_nodes,
)
from glimmer.certify.sim_category_dcgm import run_diagnostics
from glimmer.certify.sim_category_nccl import run_communication
from glimmer.certify.sim_category_training import run_training_category
from glimmer.certify.sim_result import CategoryResult, CertResult
from glimmer.certify.sim_spec import Category, CertSpec
from glimmer.errors import InputError
from glimmer.sim.twin import FleetSim

# The fault mode that is scheduler state on the simulator: a drained node is cordoned.
DRAIN_MODE = "gpu_node_drain"


def sim_nodes(twin: FleetSim, t: float = 0.0) -> list[NodeInfo]:
    """The fleet's nodes as a cluster would list them at ``t``. A simulated node carries no
    taint, except that a node whose every GPU a ``gpu_node_drain`` fault covers is cordoned:
    unschedulable, with the cordon taint ``node.kubernetes.io/unschedulable:NoSchedule``."""
    drained: set[int] = set()
    for f in twin.active_faults(t):
        if f.mode == DRAIN_MODE:
            drained.update(int(g) for g in twin.reach.gpus(f.mode, f.target))
    cordoned = {
        n.hostname
        for n in twin.topo.nodes
        if n.gpu_count and all(g in drained for g in range(n.gpu_start, n.gpu_start + n.gpu_count))
    }
    cordon = (Taint(UNSCHEDULABLE_TAINT, "", "NoSchedule"),)
    return [
        replace(n, taints=cordon, unschedulable=True) if n.name in cordoned else n
        for n in fleet_nodes(twin.topo)
    ]


def _by_labels(nodes: Sequence[NodeInfo], spec: CertSpec) -> list[NodeInfo]:
    out = [
        n
        for n in nodes
        if all(n.labels.get(k) == v for k, v in spec.node_selector.items())
        and all(r.matches(n.labels) for r in spec.match_expressions)
    ]
    if spec.node_names:
        names = set(spec.node_names)
        out = [n for n in out if n.name in names]
    return out


def select(nodes: Sequence[NodeInfo], spec: CertSpec) -> list[NodeInfo]:
    """Nodes matching the target (§2.1): every nodeSelector label and every matchExpression
    (AND), the nodeNames filter, every taintSelectors entry carried; cordoned nodes only when
    the target keeps them (includeUnschedulable, or the cordon taint among the selectors)."""
    out = [
        n
        for n in _by_labels(nodes, spec)
        if all(t.matches(n.taints) for t in spec.taint_selectors)
        and (spec.keeps_unschedulable or not n.unschedulable)
    ]
    return sorted(out, key=lambda n: n.name)


def _no_target(twin: FleetSim, every: Sequence[NodeInfo], spec: CertSpec) -> InputError:
    """Why nothing was selected, naming the field that emptied the target."""
    fleet = twin.topo.name
    labelled = _by_labels(every, spec)
    if labelled and spec.taint_selectors:
        missing = [
            t for t in spec.taint_selectors if not any(t.matches(n.taints) for n in labelled)
        ]
        shown = ", ".join(f"{t.key}={t.value or '*'}:{t.effect or '*'}" for t in missing)
        return InputError(
            f"no targeted node of fleet {fleet!r} carries every taint selected ({shown} on none); "
            f"simulated nodes carry no taints but the cordon taint {UNSCHEDULABLE_TAINT} of "
            f"drained nodes",
            spec.locate("spec.target.taintSelectors"),
        )
    if labelled:
        return InputError(
            f"every targeted node of fleet {fleet!r} is cordoned (unschedulable); set "
            "includeUnschedulable to certify them",
            spec.locate("spec.target.includeUnschedulable"),
        )
    return InputError(
        f"no node of fleet {fleet!r} matches the target of Certification/{spec.name}",
        spec.locate("spec.target"),
    )


def _unknown_name(twin: FleetSim, every: Sequence[NodeInfo], spec: CertSpec) -> InputError | None:
    """A ``nodeNames`` entry no node of the fleet has: the filter would drop it without a word,
    and the node the user meant would go uncertified."""
    known = {n.name for n in every}
    for i, name in enumerate(spec.node_names):
        if name not in known:
            return InputError(
                f"no node of fleet {twin.topo.name!r} is named {name!r}: nodeNames filters the "
                "target, so a misspelt name would leave the node you meant uncertified",
                spec.locate(f"spec.target.nodeNames[{i}]"),
            )
    return None


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
    every = sim_nodes(twin)
    unnamed = _unknown_name(twin, every, spec)
    if unnamed is not None:
        raise unnamed
    targeted = select(every, spec)
    if not targeted:
        raise _no_target(twin, every, spec)
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
