"""The nodes of a Slurm cluster, and the engine's cordon as a drain plus a reservation.

A drained Slurm node starts no new job at all — not root's, not one submitted into a
reservation — while a job already allocated keeps running (``drng``, then ``drain``). The
engine cordons a node *before* it creates the execution and keeps it cordoned across its unit,
so a cordon here is two things:

* a reservation ``glimmer-<store>-<node>`` for the submitting user (``Flags=IGNORE_JOBS``,
  open-ended): it keeps every other user's job off the node from the cordon to the release,
  including the moments the drain is lifted for our own job (:meth:`SlurmNodes.opened`);
* ``scontrol update nodename=N state=drain reason=<stamp>``, the stamp (:mod:`.stamp`) carrying
  the run's annotations, so ``sinfo -R`` says whose drain it is.

Slurm keeps a reason only on a drained node, yet the engine writes its stamp strictly before
its cordon; so this store's record of a node lives in ``<state>/nodes/<node>.json`` (every
annotation, whether we cordoned it, changed in one atomic write under the node's lock), and a
fresh read merges: a node drained with another store's stamp shows that stamp; otherwise our
file's annotations (or, the file lost, our own stamp read back from the reason). A node is
unschedulable when Slurm says it is drained or down, or our file says we cordoned it (our
reservation still holds it even while its drain is lifted).

A drain that is not ours (an administrator's reason, another store's stamp) is never lifted or
rewritten: it stays as it was, whatever the engine restores.

Every read is fresh, with one allowance: reads this close together (:data:`SHARED_READ_S`, and
no change by this process between them) share one ``scontrol`` call. The engine reads a run's
nodes one by one, which on an API server is one request each; here each is a process and a
round trip to slurmctld, while one call answers for every node of a small cluster, and Slurm's
own state moves on its one-second ticks. On a cluster larger than :data:`SHARED_READ_NODES`
a single node is read alone.
"""

from __future__ import annotations

import contextlib
import getpass
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from glimmer.backends.base import apply_annotations, selector_matches
from glimmer.backends.common.files import locked, read_json, write_json
from glimmer.backends.slurm.commands import Slurm, SlurmCommandError, records
from glimmer.backends.slurm.node_facts import NodeState, facts_of, node_state
from glimmer.backends.slurm.stamp import Stamp, bare_reason, decode, encode, stamped
from glimmer.backends.slurm.store_id import store_id
from glimmer.engine.backend import NodeView, NotFound
from glimmer.engine.keys import CORDON_OWNER

RESERVATION_PREFIX = "glimmer-"
SHARED_READ_S = 0.5  # seconds within which reads share one call (module docstring)
SHARED_READ_NODES = 64  # a cluster this small is read whole when one of its nodes is asked for


@dataclass(frozen=True)
class SlurmNode:
    """One node read fresh: Slurm's record, what it means, and this store's file."""

    record: Mapping[str, str]
    state: NodeState
    reason: str  # as written, Slurm's "[user@time]" removed; "" when none
    stamp: Stamp | None  # the reason as a stamp, when the node is drained with one
    kept: Mapping[str, Any]  # this store's file for the node ({} when none)

    @property
    def name(self) -> str:
        return self.record.get("NodeName", "")

    def ours(self, store: str) -> bool:
        """Drained with a stamp of ``store``: a drain this store made and may lift."""
        return self.stamp is not None and self.stamp.store == store

    def foreign_drain(self, store: str) -> bool:
        """Drained or down by someone else: a state this store never changes."""
        return (self.state.drained or self.state.down) and not self.ours(store)

    @property
    def cordoned(self) -> bool:
        """Whether this store cordoned it (its file says so)."""
        return bool(self.kept.get("cordoned"))


class SlurmNodes:
    """The :class:`~glimmer.engine.backend.Nodes` of a Slurm cluster, this store's record of
    them under ``<state_dir>/nodes``. ``partition`` limits the nodes to one partition's;
    ``user`` is whom the reservations admit (default: the user running glimmer, who submits
    the jobs)."""

    def __init__(
        self,
        state_dir: Path,
        slurm: Slurm,
        *,
        partition: str | None = None,
        user: str | None = None,
        store: str | None = None,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.root = self.state_dir / "nodes"
        self.slurm = slurm
        self.partition = partition
        self.user = user or getpass.getuser()
        self.store = store or store_id(self.state_dir)
        self._recent: tuple[float, dict[str, SlurmNode]] | None = None  # when read, what
        self._known = 0  # how many nodes the last read of all of them found

    # -- reading ------------------------------------------------------------------------------
    def _path(self, name: str) -> Path:
        return self.root / f"{name}.json"

    def _lock(self, name: str) -> contextlib.AbstractContextManager[None]:
        return locked(self.root / f"{name}.lock")

    def reservation(self, name: str) -> str:
        """The name of this store's reservation of node ``name``."""
        return f"{RESERVATION_PREFIX}{self.store}-{name}"

    def _node(self, record: Mapping[str, str]) -> SlurmNode:
        state = node_state(record.get("State", ""))
        reason = bare_reason(record.get("Reason", "")) if "Reason" in record else ""
        stamp = decode(reason) if state.drained and reason else None
        kept = read_json(self._path(record.get("NodeName", ""))) or {}
        return SlurmNode(record, state, reason, stamp, kept)

    def _in_partition(self, record: Mapping[str, str]) -> bool:
        if self.partition is None:
            return True
        return self.partition in record.get("Partitions", "").split(",")

    def read(self, name: str) -> SlurmNode | None:
        """Node ``name`` fresh from Slurm with this store's file, or None when Slurm has no
        such node (or it is outside the partition)."""
        done = self.slurm.call("scontrol", "show", "node", "-o", name, check=False)
        if done.returncode != 0:
            said = f"{done.stderr} {done.stdout}".lower()
            if "not found" in said or "invalid node name" in said:
                return None
            self.slurm.run("scontrol", "show", "node", "-o", name)  # raises, naming the error
        found = [r for r in records(done.stdout) if r.get("NodeName") == name]
        if not found or not self._in_partition(found[0]):
            return None
        return self._node(found[0])

    def read_all(self) -> list[SlurmNode]:
        """Every node (of the partition), fresh, in Slurm's order."""
        out = self.slurm.run("scontrol", "show", "node", "-o")
        every = [r for r in records(out) if r.get("NodeName")]
        self._known = len(every)
        found = [self._node(r) for r in every if self._in_partition(r)]
        self._recent = (time.monotonic(), {node.name: node for node in found})
        return found

    def _shared(self) -> dict[str, SlurmNode] | None:
        """The nodes of a read made under :data:`SHARED_READ_S` ago (None: none that recent)."""
        if self._recent is None or time.monotonic() - self._recent[0] >= SHARED_READ_S:
            return None
        return self._recent[1]

    def _changed(self) -> None:
        """This process changed a node: the next read asks Slurm again."""
        self._recent = None

    def view(self, node: SlurmNode) -> NodeView:
        """The engine's view of ``node``: Slurm's facts, the merged annotations, and whether
        anything keeps new work off it."""
        annotations: Mapping[str, str]
        kept = node.kept.get("annotations") or {}
        if node.stamp is not None and not node.ours(self.store):
            annotations = node.stamp.annotations  # another store's run: its stamp is the truth
        elif kept:
            annotations = kept
        elif node.stamp is not None:
            annotations = node.stamp.annotations  # ours, the file lost: the reason remembers
        else:
            annotations = {}
        unschedulable = node.state.drained or node.state.down or node.cordoned
        return replace(
            facts_of(node.record), unschedulable=unschedulable, annotations=dict(annotations)
        )

    def get_node(self, name: str) -> NodeView | None:
        shared = self._shared()
        if shared is None and 0 < self._known <= SHARED_READ_NODES:
            self.read_all()  # one call for the whole small cluster: its next reads share it
            shared = self._shared()
        node = shared.get(name) if shared is not None else self.read(name)
        return self.view(node) if node is not None else None

    def list_nodes(self, selector: Mapping[str, str] | None = None) -> list[NodeView]:
        shared = self._shared()
        nodes = list(shared.values()) if shared is not None else self.read_all()
        views = (self.view(n) for n in nodes)
        return [v for v in views if selector_matches(v.labels, selector)]

    def refusals(self, names: Sequence[str]) -> list[str]:
        """Why each of ``names`` cannot take a run now, one line per node that cannot: not a
        node of the cluster (or of the partition); drained or down by someone else, with the
        reason Slurm keeps. A drain of this store for a run — the run being resumed, or
        another, which the engine's admission judges — is no refusal here."""
        known = {node.name: node for node in self.read_all()}
        found: list[str] = []
        where = f" (partition {self.partition})" if self.partition else ""
        for name in names:
            node = known.get(name)
            if node is None:
                found.append(f"{name}: not a node of the cluster{where}")
                continue
            if not (node.state.drained or node.state.down):
                continue
            if node.ours(self.store) and node.stamp is not None and node.stamp.owner:
                continue
            state = "down" if node.state.down else "drained"
            if node.stamp is not None and node.stamp.owner:
                whose = f"by glimmer run {node.stamp.owner} of another state directory"
                found.append(f"{name}: {state} {whose} (store {node.stamp.store})")
            else:
                found.append(f"{name}: {state}, reason {node.reason or 'none given'!r}")
        return found

    # -- writing ------------------------------------------------------------------------------
    def update_node(
        self,
        name: str,
        *,
        unschedulable: bool | None = None,
        annotations: Mapping[str, str | None] | None = None,
    ) -> NodeView:
        """Set the cordon and the annotations as one logical update under the node's lock.

        The file is written first when the node becomes cordoned and last when it stops being,
        so a crash in between leaves the file claiming the cordon: the fresh read then says
        unschedulable, and the engine's release (or the reaper) finishes the job."""
        self._changed()
        with self._lock(name):
            node = self.read(name)
            if node is None:
                raise NotFound(f"node {name} not found in Slurm")
            current = self.view(node)
            new = apply_annotations(current.annotations, annotations)
            cordoned = node.cordoned if unschedulable is None else unschedulable
            record = {"cordoned": cordoned, "annotations": new}
            if cordoned:
                write_json(self._path(name), record)
            asked = self._apply(node, cordoned, new)
            if not cordoned:
                self._forget(name, new)
            # Slurm asked nothing (a stamp written ahead of its cordon): the read of a moment
            # ago, under this lock, is Slurm's state still; only the file changed.
            fresh = self.read(name) if asked else self._node(node.record)
            if fresh is None:
                raise NotFound(f"node {name} not found in Slurm")
            return self.view(fresh)

    def _apply(self, node: SlurmNode, cordoned: bool, annotations: Mapping[str, str]) -> bool:
        """Make Slurm match this store's record: reservation and drain when cordoned for a
        run, a drain alone when cordoned for none, neither otherwise. A foreign drain is left
        exactly as it is. Whether Slurm was asked to change anything."""
        name = node.name
        asked = False
        if cordoned and annotations.get(CORDON_OWNER):
            self._reserve(name)
            asked = True
        elif node.cordoned or node.ours(self.store):
            # A reservation of ours exists only while the file claims the cordon (written
            # before the reservation, cleared after its deletion) or, the file lost, while the
            # node carries our stamp: a stamp written ahead of a cordon asks nothing of Slurm.
            # A stray one (killed between the two) is the reaper's.
            self._unreserve(name)
            asked = True
        if node.foreign_drain(self.store):
            return asked
        if cordoned:
            reason = encode(Stamp(self.store, stamped(annotations)))
            if not node.ours(self.store) or node.reason != reason:
                self._drain(name, reason)
                asked = True
        elif node.ours(self.store):
            self._resume(name)
            asked = True
        return asked

    def _forget(self, name: str, annotations: Mapping[str, str]) -> None:
        if annotations:
            write_json(self._path(name), {"cordoned": False, "annotations": dict(annotations)})
        else:
            self._path(name).unlink(missing_ok=True)

    def _drain(self, name: str, reason: str) -> None:
        self.slurm.run("scontrol", "update", f"nodename={name}", "state=drain", f"reason={reason}")

    def _resume(self, name: str) -> None:
        self.slurm.run("scontrol", "update", f"nodename={name}", "state=resume")

    def _read_some(self, names: Sequence[str]) -> dict[str, SlurmNode]:
        """The nodes ``names`` (of the partition) fresh, in ONE call; one Slurm does not know
        is left out (scontrol then exits 1 and still prints the others)."""
        done = self.slurm.call("scontrol", "show", "node", "-o", ",".join(names), check=False)
        found = {r.get("NodeName", ""): r for r in records(done.stdout)}
        if not found and done.returncode != 0:
            said = f"{done.stderr} {done.stdout}".lower()
            if "not found" not in said and "invalid node name" not in said:
                self.slurm.run("scontrol", "show", "node", "-o", ",".join(names))  # raises
        return {
            name: self._node(found[name])
            for name in names
            if name in found and self._in_partition(found[name])
        }

    def _reservations(self) -> set[str]:
        """The names of every reservation Slurm holds now (one call)."""
        out = self.slurm.run("scontrol", "show", "reservation", "-o", check=False)
        return {
            line.split(" ", 1)[0].partition("=")[2]
            for line in out.splitlines()
            if line.startswith("ReservationName=")
        }

    def _reserve(self, name: str) -> None:
        reservation = self.reservation(name)
        done = self.slurm.call(
            "scontrol",
            "create",
            "reservation",
            f"ReservationName={reservation}",
            f"Nodes={name}",
            f"Users={self.user}",
            "StartTime=now",
            "Duration=infinite",
            "Flags=IGNORE_JOBS",
            check=False,
        )
        if done.returncode != 0 and not self._reserved(reservation):
            said = (done.stderr or done.stdout).strip()
            raise SlurmCommandError(
                f"scontrol create reservation {reservation} (Nodes={name}): exit "
                f"{done.returncode}: {said or 'no message'}"
            )

    def _reserved(self, reservation: str) -> bool:
        done = self.slurm.call("scontrol", "show", "reservation", "-o", reservation, check=False)
        return done.returncode == 0 and f"ReservationName={reservation} " in f"{done.stdout} "

    def unreserve(self, name: str) -> None:
        """Delete this store's reservation of node ``name`` (none: nothing to do)."""
        self._changed()
        with self._lock(name):
            self._unreserve(name)

    def _unreserve(self, name: str) -> None:
        reservation = self.reservation(name)
        done = self.slurm.call("scontrol", "delete", f"reservation={reservation}", check=False)
        if done.returncode != 0 and self._reserved(reservation):
            said = (done.stderr or done.stdout).strip()
            raise SlurmCommandError(
                f"scontrol delete reservation={reservation}: exit {done.returncode}: {said}"
            )

    # -- the window our own job starts in -----------------------------------------------------
    @contextlib.contextmanager
    def opened(self, name: str, owner: str | None = None) -> Iterator[str | None]:
        """Let this store's run start its job on its own drained node.

        Call it around submitting an execution and waiting until Slurm has allocated it.
        When node ``name`` is cordoned by this store for a run (for ``owner``'s run when
        given, as ``<namespace>/<name>/<uid>``), the drain is lifted for the block — the
        run's reservation still keeps everyone else off — and the reservation's name is
        yielded, to pass to ``sbatch --reservation``; on the way out the node is drained again
        with the same stamp (the allocated job keeps running: ``drng``). Otherwise nothing is
        changed and None is yielded: the node is not ours to open.

        The node's lock is held for the block, so no other process changes its cordon
        meanwhile; do not call :meth:`update_node` on the node inside it. A crash inside the
        block leaves the node undrained but reserved, and its file still claiming the cordon:
        a fresh read says unschedulable with the stamp, the next window (or release, or the
        reaper) puts the drain back or lifts it all.
        """
        with self.opened_all({name: owner}) as reservations:
            yield reservations[name]

    @contextlib.contextmanager
    def opened_all(self, owners: Mapping[str, str | None]) -> Iterator[dict[str, str | None]]:
        """:meth:`opened` for several nodes at once (node -> owner, or None for any run of
        this store): one window for all of them, yielding node -> reservation (None where
        there is nothing to open).

        A window costs Slurm's own time, not ours: a node resumed answers slurmctld's ping
        about 0.7 s later, and batch jobs are placed on the scheduler's next pass (every
        ``sched_interval``), so the executions one pass creates share one window instead of
        queueing for one each. The calls are per window, not per node: one read of the nodes,
        one of the reservations, one resume and one drain per distinct stamp (``nodename=``
        takes a list). The nodes' locks are taken in name order, so two processes opening
        overlapping sets never wait on each other in a circle."""
        names = sorted(owners)
        self._changed()
        with contextlib.ExitStack() as held:
            for name in names:
                held.enter_context(self._lock(name))
            nodes = self._read_some(names) if names else {}
            reasons: dict[str, str] = {}  # node -> the stamp it is drained with again
            for name in names:
                node = nodes.get(name)
                if node is not None and self._ours_to_open(node, owners[name]):
                    annotations = dict(node.kept.get("annotations") or {})
                    reasons[name] = encode(Stamp(self.store, stamped(annotations)))
            if reasons:
                have = self._reservations()
                for name in reasons:
                    if self.reservation(name) not in have:
                        self._reserve(name)
                drained = [name for name in reasons if nodes[name].state.drained]
                if drained:
                    self.slurm.run(
                        "scontrol", "update", f"nodename={','.join(drained)}", "state=resume"
                    )
            try:
                yield {name: self.reservation(name) if name in reasons else None for name in names}
            finally:
                self._changed()
                self._drain_again(reasons)

    def _ours_to_open(self, node: SlurmNode, owner: str | None) -> bool:
        """Cordoned by this store for a run (``owner``'s, when given), and no one else's drain."""
        run = (node.kept.get("annotations") or {}).get(CORDON_OWNER)
        return (
            node.cordoned
            and bool(run)
            and (owner is None or run == owner)
            and not node.foreign_drain(self.store)
        )

    def _drain_again(self, reasons: Mapping[str, str]) -> None:
        """Drain each node with its stamp: one call per distinct stamp. Every group is tried
        even when one fails (a node left open is healed by the next window or the reaper, but
        the others need not be); the first failure is raised after."""
        groups: dict[str, list[str]] = {}
        for name, reason in reasons.items():
            groups.setdefault(reason, []).append(name)
        failed: SlurmCommandError | None = None
        for reason, group in groups.items():
            try:
                self._drain(",".join(group), reason)
            except SlurmCommandError as exc:
                failed = failed or exc
        if failed is not None:
            raise failed
