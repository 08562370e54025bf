"""The object store: current objects per resource type, one resourceVersion counter, and the
recent events of each type for watches that resume from a resourceVersion.

Stored objects are never mutated: every write stores a new dict, so a LIST, a GET and every
watcher can hand out the stored dict itself without copying. Everything here is synchronous and
runs on the server's one event loop, so a watch that snapshots and subscribes in one call can
miss no write (kmock's watch released its lock in between and lost writes; kopf hung on them).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tools.k8s_standin.resources import ResourceKey

Obj = dict[str, Any]
ObjKey = tuple[str, str]  # (namespace or "", name)

# Events kept per resource type for resuming watches; an older resourceVersion gets 410 Gone,
# which kopf and kubectl answer by listing again, as against a real API server.
HISTORY = 10_000


@dataclass(frozen=True)
class Event:
    type: str  # ADDED, MODIFIED or DELETED
    rv: int
    obj: Obj
    prev: Obj | None  # the object before this event (for selector transitions)


class Subscription:
    """One watcher's queue of events; ``None`` in it means the server is closing."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()


def meta(obj: Obj) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def key_of(obj: Obj) -> ObjKey:
    m = meta(obj)
    return (m.get("namespace") or "", m["name"])


class Store:
    def __init__(self, history: int = HISTORY) -> None:
        self.rv = 0
        self._history = history
        self._objects: dict[ResourceKey, dict[ObjKey, Obj]] = {}
        self._log: dict[ResourceKey, deque[Event]] = {}
        # The resourceVersion of the newest event each type's log has dropped.
        self._dropped: dict[ResourceKey, int] = {}
        self._subs: dict[ResourceKey, set[Subscription]] = {}
        # owner uid -> the objects whose ownerReferences name it (for garbage collection).
        self._owned: dict[str, set[tuple[ResourceKey, ObjKey]]] = {}

    def next_rv(self) -> str:
        self.rv += 1
        return str(self.rv)

    def get(self, rkey: ResourceKey, okey: ObjKey) -> Obj | None:
        return self._objects.get(rkey, {}).get(okey)

    def items(self, rkey: ResourceKey, namespace: str | None = None) -> Iterator[Obj]:
        for (ns, _), obj in self._objects.get(rkey, {}).items():
            if namespace is None or ns == namespace:
                yield obj

    def in_namespace(self, namespace: str) -> list[tuple[ResourceKey, Obj]]:
        return [
            (rkey, obj)
            for rkey, objs in self._objects.items()
            for (ns, _), obj in objs.items()
            if ns == namespace
        ]

    def owned_by(self, uid: str) -> list[tuple[ResourceKey, ObjKey]]:
        return sorted(self._owned.get(uid, ()))

    def put(self, rkey: ResourceKey, obj: Obj, prev: Obj | None) -> Event:
        """Store ``obj`` (already carrying its new resourceVersion) and tell the watchers."""
        okey = key_of(obj)
        self._objects.setdefault(rkey, {})[okey] = obj
        self._index_owners(rkey, okey, prev, obj)
        return self._emit(
            rkey,
            Event(
                "ADDED" if prev is None else "MODIFIED",
                int(meta(obj)["resourceVersion"]),
                obj,
                prev,
            ),
        )

    def remove(self, rkey: ResourceKey, final: Obj, prev: Obj) -> Event:
        """Drop the object; ``final`` is its last state, carrying the deletion's resourceVersion."""
        okey = key_of(final)
        self._objects.get(rkey, {}).pop(okey, None)
        self._index_owners(rkey, okey, prev, None)
        return self._emit(rkey, Event("DELETED", int(meta(final)["resourceVersion"]), final, prev))

    def drop_type(self, rkey: ResourceKey) -> list[Obj]:
        """Forget a resource type's objects (its CRD was deleted), returning them."""
        return list(self._objects.pop(rkey, {}).values())

    def events_since(self, rkey: ResourceKey, rv: int) -> list[Event] | None:
        """Events of ``rkey`` after ``rv``, oldest first; None when the log no longer reaches."""
        if rv < self._dropped.get(rkey, 0):
            return None
        out: list[Event] = []
        for event in reversed(self._log.get(rkey, ())):
            if event.rv <= rv:
                break
            out.append(event)
        out.reverse()
        return out

    def subscribe(self, rkey: ResourceKey) -> Subscription:
        sub = Subscription()
        self._subs.setdefault(rkey, set()).add(sub)
        return sub

    def unsubscribe(self, rkey: ResourceKey, sub: Subscription) -> None:
        self._subs.get(rkey, set()).discard(sub)

    def close(self) -> None:
        for subs in self._subs.values():
            for sub in subs:
                sub.queue.put_nowait(None)

    def _emit(self, rkey: ResourceKey, event: Event) -> Event:
        log = self._log.setdefault(rkey, deque())
        if len(log) >= self._history:
            self._dropped[rkey] = log.popleft().rv
        log.append(event)
        for sub in self._subs.get(rkey, ()):
            sub.queue.put_nowait(event)
        return event

    def _index_owners(
        self, rkey: ResourceKey, okey: ObjKey, old: Obj | None, new: Obj | None
    ) -> None:
        entry = (rkey, okey)
        for obj, add in ((old, False), (new, True)):
            for ref in meta(obj).get("ownerReferences") or () if obj is not None else ():
                uid = ref.get("uid") if isinstance(ref, dict) else None
                if not uid:
                    continue
                if add:
                    self._owned.setdefault(uid, set()).add(entry)
                else:
                    self._owned.get(uid, set()).discard(entry)
