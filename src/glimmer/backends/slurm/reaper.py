"""The orphan reaper (§2.10, §7.2): give back the nodes a run that no longer exists left drained.

A run that was deleted, or whose state was lost, cannot release its cordons; on Kubernetes the
fingerprint controller reaps them. Here :func:`reap` does, at the start of every
``glimmer run --backend slurm`` (before admission) and as ``glimmer reap --backend slurm`` (for
cron). For every node this store cordoned — drained with this store's stamp, or claimed by its
file (a crash between two steps) — it reads the named run fresh from the run store: alive (same
namespace, name AND uid) → never released (a window a crash left open is closed again: the
drain put back); gone, or recreated under a new uid → resumed to its stamped prior state, its
reservation deleted, its annotations removed, in one update. An owner that does not parse
(exactly three non-empty ``/`` segments), another store's stamp and an administrator's reason
are left alone. A reservation of this store on a node no run of it claims is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.backends.slurm.nodes import RESERVATION_PREFIX, SlurmNode, SlurmNodes
from glimmer.engine.backend import NotFound, RunStore
from glimmer.engine.keys import CORDON_OWNER, HEAT_EXPECTED, PRIOR_UNSCHEDULABLE

RESUMED = "resumed"
LEFT_DRAINED = "left drained (it was drained before its run)"
REDRAINED = "drained again (its run is alive; a window was left open)"
UNRESERVED = "reservation deleted (no run of this store holds the node)"


@dataclass(frozen=True)
class Reaped:
    """What the reaper did to one node, and for whose run."""

    node: str
    owner: str
    action: str

    def line(self) -> str:
        return f"{self.node}: {self.action}" + (f" — run {self.owner}" if self.owner else "")


def parse_owner(owner: str) -> tuple[str, str, str] | None:
    """``<namespace>/<name>/<uid>``, strictly: exactly three non-empty segments."""
    parts = owner.split("/")
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def alive(store: RunStore, owner: str) -> bool:
    """Whether the run ``owner`` names exists in ``store`` under the same uid (read fresh)."""
    parsed = parse_owner(owner)
    if parsed is None:
        return True  # unreadable: never reaped
    namespace, name, uid = parsed
    run = store.get_run(namespace, name)
    return run is not None and run.metadata.uid == uid


def _claim(nodes: SlurmNodes, node: SlurmNode) -> str | None:
    """The owner this store's record of ``node`` names, or None when the node is not this
    store's (another store's stamp, an administrator's drain, nothing at all)."""
    if node.stamp is not None and not node.ours(nodes.store):
        return None
    kept = node.kept.get("annotations") or {}
    owner = kept.get(CORDON_OWNER) or (node.stamp.owner if node.stamp is not None else None)
    return owner if isinstance(owner, str) and owner else None


def reap(nodes: SlurmNodes, store: RunStore) -> list[Reaped]:
    """Release every node this store cordoned for a run that no longer exists; say what was
    done, node by node."""
    done: list[Reaped] = []
    reserved = _reservations(nodes)
    for node in nodes.read_all():
        owner = _claim(nodes, node)
        if owner is None or parse_owner(owner) is None:
            if owner is None and nodes.reservation(node.name) in reserved:
                nodes.unreserve(node.name)
                done.append(Reaped(node.name, "", UNRESERVED))
            continue
        try:
            if alive(store, owner):
                if node.cordoned and not node.state.drained:
                    nodes.update_node(node.name, unschedulable=True)
                    done.append(Reaped(node.name, owner, REDRAINED))
                continue
            view = nodes.view(node)
            prior = view.annotations.get(PRIOR_UNSCHEDULABLE) == "true"
            changes: dict[str, str | None] = {CORDON_OWNER: None, PRIOR_UNSCHEDULABLE: None}
            heat = view.annotations.get(HEAT_EXPECTED, "")
            if heat.rsplit("/", 1)[0] == owner:
                changes[HEAT_EXPECTED] = None
            nodes.update_node(node.name, unschedulable=prior, annotations=changes)
        except NotFound:
            continue  # the node left the cluster meanwhile
        done.append(Reaped(node.name, owner, LEFT_DRAINED if prior else RESUMED))
    return done


def _reservations(nodes: SlurmNodes) -> set[str]:
    """The names of this store's reservations now in Slurm."""
    out = nodes.slurm.run("scontrol", "show", "reservation", "-o")
    prefix = f"ReservationName={RESERVATION_PREFIX}{nodes.store}-"
    return {
        line.split(" ", 1)[0].partition("=")[2]
        for line in out.splitlines()
        if line.startswith(prefix)
    }
