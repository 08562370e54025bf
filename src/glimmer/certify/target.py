"""The nodes a certification certifies (specs/certify.md §2.1, §3.1): the target's labels,
names and taints over the nodes a substrate lists, cordoned nodes only when the target opts in,
and the majority GPU architecture among them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from glimmer.certify.catalog.gpu import parse_product
from glimmer.certify.grouping import PRODUCT_LABEL, NodeInfo
from glimmer.certify.spec import CertSpec
from glimmer.errors import InputError


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


def no_target(fleet: str, every: Sequence[NodeInfo], spec: CertSpec, note: str) -> InputError:
    """Why nothing was selected, naming the field that emptied the target; ``note`` is what the
    substrate says about its nodes' taints (Substrate.taint_note)."""
    labelled = _by_labels(every, spec)
    if labelled and spec.taint_selectors:
        missing = [
            t for t in spec.taint_selectors if not any(t.matches(n.taints) for n in labelled)
        ]
        shown = ", ".join(f"{t.key}={t.value or '*'}:{t.effect or '*'}" for t in missing)
        return InputError(
            f"no targeted node of fleet {fleet!r} carries every taint selected ({shown} on none)"
            + (f"; {note}" if note else ""),
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


def unknown_names(every: Sequence[NodeInfo], names: Sequence[str]) -> list[str]:
    """The ``nodeNames`` entries no node of ``every`` has, in their order. Left in, the
    filter would drop them without a word and the node the user meant would go uncertified:
    both substrates refuse them (:func:`unknown_name` here, the cluster's discovery there)."""
    known = {n.name for n in every}
    return [name for name in names if name not in known]


def unknown_names_message(where: str, unknown: Sequence[str]) -> str:
    """What a refusal of ``unknown`` names says, ``where`` the nodes were looked for."""
    shown = ", ".join(repr(n) for n in unknown)
    return (
        f"no node of {where} is named {shown}: nodeNames filters the target, so a misspelt "
        "name would leave the node you meant uncertified"
    )


def unknown_name(fleet: str, every: Sequence[NodeInfo], spec: CertSpec) -> InputError | None:
    """The first ``nodeNames`` entry no node of the fleet has (:func:`unknown_names`), located
    at its index."""
    unknown = unknown_names(every, spec.node_names)
    if not unknown:
        return None
    i = spec.node_names.index(unknown[0])
    return InputError(
        unknown_names_message(f"fleet {fleet!r}", unknown[:1]),
        spec.locate(f"spec.target.nodeNames[{i}]"),
    )


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
