"""Topology-aware node groups for a certification category (specs/certify.md §7.3).

Input is what a cluster tells us about its nodes — a name and its labels — so the same code
groups a real cluster (a rack or ``nvidia.com/gpu.clique`` label) and a simulated fleet (the
simulator's substrate, ``glimmer.backends.sim.certify``, writes those labels from the topology).

* **Simple** (no topology key): consecutive names in groups of ``nodes_per_job``; a remainder
  borrows the last nodes of the last full group into an overflow group.
* **Topology**: nodes are packed domain by domain, largest domain first, so a rack is split
  only when no whole rack fills a group; ``strict_domain`` gives one group per domain at its
  natural size (intra-rack tests, NVLink domains kept whole). Leftovers fill overflow groups
  from per-domain pools, untested nodes first and already-tested ones borrowed after.

Every node is *owned* by exactly one group; an overflow group also lists the nodes it
borrowed (tested elsewhere) so a scheduler can wait for the lender's job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from glimmer.errors import InputError

# Labels a GPU node carries on Kubernetes (GPU feature discovery, the platform's topology
# label) and that the simulator's substrate writes for a simulated fleet.
CLIQUE_LABEL = "nvidia.com/gpu.clique"  # the MNNVL domain (GB200/GB300 NVL72)


def mnnvl_on(enabled: bool | None, nodes: Sequence[NodeInfo]) -> bool:
    """MNNVL as a category's option sets it; unset, on when the nodes carry a clique label
    (NVL72 parts: the controller's default)."""
    return enabled if enabled is not None else any(CLIQUE_LABEL in n.labels for n in nodes)


PRODUCT_LABEL = "nvidia.com/gpu.product"
RACK_LABEL = "topology.glimmer.ai/rack"  # our rack label; clouds have their own (§8 cluster info)
LEAF_LABEL = "topology.glimmer.ai/leaf"  # the backend leaf of the node's rail-0 port
# The node's backend fabric as an inventory declares it (certify/fabric.py): how many backend
# rails its ports sit on (rails 0..n-1 of a rail-optimised fabric) and its slowest port's speed.
# A fact about the node's network, beside rack and leaf; certify.glimmer.ai/ is what glimmer
# writes on its own objects.
BACKEND_RAILS_LABEL = "topology.glimmer.ai/backend-rails"
BACKEND_GBPS_LABEL = "topology.glimmer.ai/backend-gbps"


# The taint Kubernetes puts on a cordoned node (``spec.unschedulable``).
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"


@dataclass(frozen=True)
class Taint:
    """A node taint: key, value ("" when none) and effect."""

    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(frozen=True)
class NodeInfo:
    """A node as the grouping sees it: its name and labels, and for target selection its
    taints and whether it is cordoned."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False


@dataclass(frozen=True)
class Group:
    """One group of nodes that runs one job."""

    name: str
    nodes: tuple[str, ...]  # sorted
    domains: tuple[str, ...] = ()
    overflow: bool = False
    borrowed: tuple[str, ...] = ()  # members already tested by another group (overflow only)

    @property
    def owned(self) -> tuple[str, ...]:
        """The members this group is the test of record for."""
        return tuple(n for n in self.nodes if n not in self.borrowed)

    def domain_node_counts(self, domain_of: Mapping[str, str]) -> dict[str, int]:
        """Nodes per domain, for multi-domain groups (empty otherwise), as the status shows."""
        counts: dict[str, int] = {}
        for n in self.nodes:
            d = domain_of.get(n, "")
            counts[d] = counts.get(d, 0) + 1
        return counts if len(counts) > 1 else {}


def partition(
    nodes: Sequence[NodeInfo],
    nodes_per_job: int,
    topology_key: str | None = None,
    *,
    strict_domain: bool = False,
) -> list[Group]:
    """Partition ``nodes`` into groups of ``nodes_per_job`` (§7.3)."""
    if not nodes:
        raise InputError("no nodes to partition")
    if nodes_per_job < 1:
        raise InputError(f"nodesPerJob must be at least 1, got {nodes_per_job}")
    ordered = sorted(nodes, key=lambda n: n.name)
    if not topology_key:
        return _simple([n.name for n in ordered], nodes_per_job)
    missing = [n.name for n in ordered if topology_key not in n.labels]
    if missing:
        names = ", ".join(f'"{m}"' for m in missing)
        raise InputError(f'node {names} missing topology label "{topology_key}"')
    domains: dict[str, list[str]] = {}
    for n in ordered:
        domains.setdefault(n.labels[topology_key], []).append(n.name)
    if strict_domain:
        by_size = sorted(domains, key=lambda d: (-len(domains[d]), d))
        return [Group(f"group-{i}", tuple(domains[d]), (d,)) for i, d in enumerate(by_size)]
    return _topology(domains, nodes_per_job)


def _simple(names: list[str], npj: int) -> list[Group]:
    full, rest = divmod(len(names), npj)
    if full == 0:
        return [Group("group-0", tuple(names))]
    groups = [Group(f"group-{i}", tuple(names[i * npj : (i + 1) * npj])) for i in range(full)]
    if rest:
        tail = names[full * npj :]
        lent = names[full * npj - (npj - rest) : full * npj]  # last nodes of the last full group
        groups.append(
            Group(f"group-{full}-overflow", tuple(sorted(tail + lent)), (), True, tuple(lent))
        )
    return groups


def _topology(domains: dict[str, list[str]], npj: int) -> list[Group]:
    remaining = {d: list(ns) for d, ns in domains.items()}
    largest = max(len(ns) for ns in domains.values())
    # A group never needs more domains than it takes to fill it from the biggest ones.
    max_domains = math.ceil(npj / largest)
    groups: list[Group] = []
    while True:
        avail = sorted(
            (d for d in remaining if remaining[d]), key=lambda d: (-len(remaining[d]), d)
        )
        if sum(len(remaining[d]) for d in avail) < npj:
            break
        top = avail[:max_domains]
        if sum(len(remaining[d]) for d in top) < npj:
            break
        taken: list[str] = []
        used: list[str] = []
        for d in top:
            want = npj - len(taken)
            if want <= 0:
                break
            part, remaining[d] = remaining[d][:want], remaining[d][want:]
            taken += part
            used.append(d)
        groups.append(Group(f"group-{len(groups)}", tuple(sorted(taken)), tuple(sorted(used))))
    untested = {d: ns for d, ns in remaining.items() if ns}
    if not untested:
        return groups
    if not groups:
        every = sorted(n for ns in domains.values() for n in ns)
        return [Group("group-0", tuple(every), tuple(sorted(domains)))]
    return groups + _overflow(domains, untested, npj, len(groups))


def _overflow(
    domains: dict[str, list[str]], untested: dict[str, list[str]], npj: int, start: int
) -> list[Group]:
    """Overflow groups covering every untested node, topped up with tested nodes borrowed from
    the same domains first (so a leftover stays with its rack as far as possible)."""
    left = {d: list(ns) for d, ns in untested.items()}
    tested = {d: [n for n in ns if n not in set(untested.get(d, []))] for d, ns in domains.items()}
    out: list[Group] = []
    while any(left.values()):
        order = sorted(domains, key=lambda d: (-len(left.get(d, [])), -len(domains[d]), d))
        taken: list[str] = []
        borrowed: list[str] = []
        used: list[str] = []
        for d in order:
            if len(taken) >= npj:
                break
            fresh = left.get(d, [])
            want = npj - len(taken)
            got = fresh[:want]
            left[d] = fresh[want:]
            lend = tested[d][: npj - len(taken) - len(got)]
            if got or lend:
                used.append(d)
            taken += got + lend
            borrowed += lend
            tested[d] = tested[d] + got  # now tested: may be borrowed by a later overflow
        out.append(
            Group(
                f"group-{start + len(out)}-overflow",
                tuple(sorted(taken)),
                tuple(sorted(used)),
                True,
                tuple(sorted(borrowed)),
            )
        )
    return out


def domain_key(nodes: Sequence[NodeInfo]) -> str:
    """The topology key that describes these nodes best: the NVLink clique when every node has
    one (MNNVL racks), else the rack."""
    if nodes and all(CLIQUE_LABEL in n.labels for n in nodes):
        return CLIQUE_LABEL
    return RACK_LABEL
