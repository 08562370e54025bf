"""The orphan-cordon reaper (specs/burnin.md §2.10, §7.2; scenario 27): give back a node whose
cordon stamp names a run that no longer exists.

A run releases its own cordons on its way out (§2.14); a run deleted while the operator was
down, or whose finalizer someone removed by hand, cannot. The reaper runs for every Node event
(inside the fingerprint reconciler) and re-polls every 5 minutes while a live stamp exists.

* The stamp is parsed strictly: exactly three non-empty ``/`` segments, else the node is left
  alone (an unreadable stamp is not evidence of anything).
* The named run is read **uncached** (a GET through the backend): it exists with the same UID
  → alive, never released; NotFound, or a run of that name under another UID (deleted and
  recreated) → orphan. Any other read error propagates (the handler retries): a failure to
  read is never taken for absence.
* The release itself is the engine's (:func:`glimmer.engine.cordon.release_node`), run as a
  pass of the dead run with nothing recorded: the stamped prior schedulability is restored and
  the stamp and the run's own heat declaration are removed in one update. So the reaper cannot
  disagree with the run's own teardown about what "released" means.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from glimmer.api.meta import API_VERSION
from glimmer.api.pinned import PlanDocument
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.engine.backend import Backend, ExecutionIndex
from glimmer.engine.book import Book
from glimmer.engine.context import Pass
from glimmer.engine.cordon import release_node
from glimmer.engine.keys import CORDON_OWNER

REPOLL_SECONDS = 300.0  # Appendix A: cordon reaper interval while a live stamp exists

ALIVE = "alive"  # the stamp's run exists under the same UID: the node stays as it is
REAPED = "reaped"  # the run is gone: the node was restored and unstamped
UNSTAMPED = "unstamped"  # no stamp: nothing to poll
UNREADABLE = "unreadable"  # a stamp that does not parse: left alone, never polled


@dataclass(frozen=True)
class Reaping:
    """What the reaper found on one node, and when to look again (None: only on a change)."""

    node: str
    outcome: str
    owner: str = ""

    @property
    def requeue_after(self) -> float | None:
        return REPOLL_SECONDS if self.outcome == ALIVE else None


def parse_owner(owner: str) -> tuple[str, str, str] | None:
    """``<namespace>/<name>/<uid>``, strictly: exactly three non-empty segments."""
    parts = owner.split("/")
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def _ghost(namespace: str, name: str, uid: str, node: str) -> BurnInRun:
    """The dead run as a pass needs it: its identity (which makes the stamp), no status (so
    nothing recorded overrides the stamped prior) and a placeholder spec."""
    data: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": BurnInRun.KIND,
        "metadata": {"namespace": namespace, "name": name, "uid": uid},
        "spec": {"profileRef": "reaped", "target": {"nodeNames": [node]}},
    }
    return BurnInRun.model_validate(data)


def _release(backend: Backend, run: BurnInRun, node: str) -> None:
    empty = PlanDocument(targets=[], profile_entries=[], tests=[])
    ctx = Pass(
        backend=backend,
        run=run,
        plan=empty,
        now=backend.now(),
        book=Book(BurnInRunStatus()),
        executions=ExecutionIndex([]),
    )
    release_node(ctx, node)


def reap_node(backend: Backend, node: str) -> Reaping:
    """Look at ``node`` (read fresh) and release it when its stamp names a run that is gone."""
    view = backend.get_node(node)
    if view is None:
        return Reaping(node, UNSTAMPED)
    owner = view.annotations.get(CORDON_OWNER)
    if owner is None:
        return Reaping(node, UNSTAMPED)
    parsed = parse_owner(owner)
    if parsed is None:
        return Reaping(node, UNREADABLE, owner)
    namespace, name, uid = parsed
    run = backend.get_run(namespace, name)  # uncached; any error but NotFound propagates
    if run is not None and run.metadata.uid == uid:
        return Reaping(node, ALIVE, owner)
    _release(backend, _ghost(namespace, name, uid, node), node)
    return Reaping(node, REAPED, owner)
