"""What every build step shares: where the declaration came from, and the uniqueness ledger.

Errors name the file, the object (``Fleet/<name>``), the field path as written on the wire
(``spec.pools[0].placements[1].slotStart``) and, when the loader recorded it, the line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from glimmer.api.fleet import Fleet
from glimmer.errors import InputError, Location


@dataclass
class BuildContext:
    """The declaration being built and how to point at a part of it."""

    fleet: Fleet
    source: str | None = None
    lines: Mapping[str, int] = field(default_factory=dict)
    document: int | None = None

    @property
    def seed(self) -> str:
        return self.fleet.metadata.name

    def error(self, path: str, reason: str) -> InputError:
        """An InputError at ``path`` (a dotted wire path such as ``spec.racks[0].heightU``)."""
        return InputError(reason, self.location(path))

    def location(self, path: str) -> Location:
        line = None
        probe = path
        while probe and line is None:
            line = self.lines.get(probe)
            probe = probe.rpartition(".")[0] if "." in probe else ""
        return Location(
            file=self.source,
            document=self.document,
            obj=f"Fleet/{self.fleet.metadata.name}",
            field=path,
            line=line,
        )


class Claims:
    """The global uniqueness ledger (§1.3): each (class, value) may be claimed once per fleet.

    One dict per class, keyed by the value itself: a ledger keyed by (class, value) tuples
    built and hashed a fresh tuple per claim, and at 100k GPUs its one table of some 600k
    entries outgrew the CPU caches, so each claim cost more the bigger the fleet."""

    def __init__(self, ctx: BuildContext) -> None:
        self._ctx = ctx
        self._seen: dict[str, dict[str, str]] = {}

    def claim(self, cls: str, value: str, path: str) -> None:
        """Record ``value`` of class ``cls`` at ``path``; empty values are never claimed."""
        if not value:
            return
        seen = self._seen.setdefault(cls, {})
        first = seen.get(value)
        if first is not None:
            raise self._ctx.error(path, f"duplicate {cls} {value} (also {first})")
        seen[value] = path

    def claim_many(self, cls: str, values: list[str], paths: list[str]) -> None:
        """Bulk form of :meth:`claim` for generated identities: the values go into a dict in one
        C-level pass; only when that shows a clash (a repeat among them, or one already claimed)
        are they walked one by one, so the error names the same first clash :meth:`claim` would."""
        seen = self._seen.setdefault(cls, {})
        fresh = dict(zip(values, paths, strict=True))
        fresh.pop("", None)
        claimed = len(values) - values.count("")
        if len(fresh) == claimed and fresh.keys().isdisjoint(seen):
            seen.update(fresh)
            return
        for value, path in zip(values, paths, strict=True):
            if value:
                first = seen.get(value)
                if first is not None:
                    raise self._ctx.error(path, f"duplicate {cls} {value} (also {first})")
                seen[value] = path
