"""The nodes a run holds cordoned, as its status lists them, kept in order change by change.

The status lists the run's cordons sorted. A pass over a run with a thousand nodes cordoned
used to sort them all again for every write (and build the set afresh from the list at every
pass), though a pass moves one or two. :class:`Cordoned` is the set a pass works with; it notes
each change, so the list the next write carries is the one last written with those changes put
in place — the same list a sort would give, because the list it starts from is one this engine
wrote (``canonical``). From any other status it is simply sorted whole, as before.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable


class Cordoned(set[str]):
    """A set of node names that remembers what changed since the status was written."""

    def __init__(self, names: Iterable[str] = (), *, canonical: bool = False) -> None:
        super().__init__(names)
        self.canonical = canonical  # built from a sorted list this engine wrote
        self.changes: dict[str, bool] = {}  # name -> now cordoned (the last change wins)
        self.cleared = False

    def add(self, name: str, /) -> None:
        if name not in self:
            self.changes[name] = True
            super().add(name)

    def discard(self, name: object, /) -> None:
        if isinstance(name, str) and name in self:
            self.changes[name] = False
            super().discard(name)

    def clear(self) -> None:
        self.cleared = True
        self.changes.clear()
        super().clear()

    def listed(self, stored: list[str] | None) -> list[str] | None:
        """The sorted list the status should carry now; ``stored`` is the list it carries."""
        if not self.canonical or self.cleared:
            return sorted(self) or None
        if not self.changes:
            return stored or None
        out = list(stored or ())
        for name, held in self.changes.items():
            at = bisect_left(out, name)
            present = at < len(out) and out[at] == name
            if held and not present:
                out.insert(at, name)
            elif not held and present:
                del out[at]
        return out or None

    def written(self) -> None:
        """The status now lists exactly this set, sorted."""
        self.canonical = True
        self.changes.clear()
        self.cleared = False
