"""Which runs a starting run could contend with, without walking every run per start.

Admission (:mod:`glimmer.plan.admission`) looks for a holding run that shares a target. A run
that names its nodes can only contend with runs known to hold one of them, or whose targets only
their selector can tell; every other run shares nothing and never decides anything. So the
engine indexes the runs of the listing it was handed by the nodes they are known to hold, and
hands admission only those that could matter — the same decision at the cost of the runs that
changed since the last listing, not every run in a sweep of thousands.

The listing is always the fresh one the start read (nothing is decided from a cached run): the
index only says which of its runs to look at. It is brought up to date by object identity, so
a substrate that hands back the objects it stored costs nothing for runs that did not change,
and one that deserialises every read simply re-indexes. Only the last listing is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress

from glimmer.api.run import BurnInRun
from glimmer.plan.admission import known_targets

# Up to this many runs found, each one's place in the listing is looked up in it directly;
# more, and a table of every run's place is cheaper.
_FEW = 16


class RunIndex:
    """The runs of the last listing by the nodes they are known to hold."""

    def __init__(self) -> None:
        # Kept by id, with the run itself so that the id is not reused while it is indexed.
        self._runs: dict[int, BurnInRun] = {}
        self._targets: dict[int, frozenset[str] | None] = {}
        self._by_node: dict[str, set[int]] = {}
        self._unknown: set[int] = set()  # runs whose targets only their selector can tell
        self._ids: list[int] = []  # the last listing's runs, in its order

    def __len__(self) -> int:
        return len(self._runs)

    def _add(self, key: int, run: BurnInRun) -> None:
        self._runs[key] = run
        targets = self._targets[key] = known_targets(run)
        if targets is None:
            self._unknown.add(key)
            return
        for node in targets:
            self._by_node.setdefault(node, set()).add(key)

    def _drop(self, key: int) -> None:
        del self._runs[key]
        targets = self._targets.pop(key)
        if targets is None:
            self._unknown.discard(key)
            return
        for node in targets:
            holders = self._by_node.get(node)
            if holders is not None:
                holders.discard(key)
                if not holders:
                    del self._by_node[node]

    def rivals(self, runs: Sequence[BurnInRun], targets: Sequence[str]) -> list[BurnInRun]:
        """The runs of ``runs`` (the fresh listing) that could share one of ``targets``, in
        listing order."""
        # The listing is walked only at C speed (ids, sets): a sweep of 2,048 pair runs starts
        # each run against a listing of all of them, and the dicts of every run and position
        # that were built per start made the sweep's starts quadratic (2 s of 25 s).
        ids = list(map(id, runs))
        if ids != self._ids:
            self._sync(runs, ids)
        found: set[int] = set(self._unknown)
        for node in dict.fromkeys(targets):
            found.update(self._by_node.get(node, ()))
        if not found:
            return []
        if len(found) <= _FEW:
            order = sorted(found, key=ids.index)
        else:
            position = dict(zip(ids, range(len(ids)), strict=True))
            order = sorted(found, key=position.__getitem__)
        return [self._runs[key] for key in order]

    def _sync(self, runs: Sequence[BurnInRun], ids: list[int]) -> None:
        """Index the listing ``runs`` (whose ids are ``ids``): runs no longer listed dropped,
        runs not seen before added. A run kept is the same object (the index holds it, so its
        id cannot have been reused), so what it holds is as indexed."""
        listed = set(ids)
        for key in self._runs.keys() - listed:
            self._drop(key)
        added = listed - self._runs.keys()
        if added:
            for run in compress(runs, map(added.__contains__, ids)):
                if id(run) not in self._runs:  # a run listed twice is indexed once
                    self._add(id(run), run)
        self._ids = ids
