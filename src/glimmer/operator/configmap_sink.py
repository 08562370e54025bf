"""The ConfigMap sink on a cluster (specs/burnin.md §5.6; scenario 55): each envelope stored in
ConfigMap ``spec.configMap.name`` of the sink's namespace under the key ``<deliveryId>``.

* Created if missing; a create that races another writer's (409 AlreadyExists) is a retryable
  failure, as is a replace refused for a stale resourceVersion (409): the next attempt reads
  again. An identical value already stored is a no-op; a different one (a re-sent terminal
  envelope carrying more results) is overwritten.
* The size budget is the ConfigMap's: keys and values of one object together at most
  **921,600 bytes** (900 KiB). Where the original refused a write past it and asked the
  operator to rotate or shard, this sink rolls over by itself, with the layout of the folder
  sink that stands in for it off-cluster (:mod:`glimmer.sinks.directory`, docs/sinks.md): the
  named object first, then ``<name>-0001``, ``<name>-0002`` … each kept under the budget; an
  envelope too big for any one object (the terminal envelope of a run of a few hundred nodes)
  is stored as parts ``<deliveryId>.0001-of-0003.part`` …, cut at UTF-8 character
  boundaries, whose values joined in order are the envelope. :func:`read_sink` puts them back
  together and skips an entry whose parts are not all there yet.
* The ConfigMaps are owned by no run and accumulate (§5.6); deleting them is the operator's
  (a human's) call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, cast

from lightkube import Client
from lightkube.resources.core_v1 import ConfigMap

from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import as_dict
from glimmer.engine.backend import BackendError, NotFound
from glimmer.sinks.envelope import Envelope
from glimmer.sinks.errors import DeliveryError

CONFIGMAPS = ConfigMap  # a ConfigMap has no field a typed decoder could find missing
BUDGET_BYTES = 921_600  # 900 KiB: one object's keys and values together
MAX_OBJECTS = 9_999
PART_SUFFIX = ".part"
_ID = re.compile(r"[0-9a-f]{32}")
_PART = re.compile(r"([0-9a-f]{32})\.(\d{4})-of-(\d{4})\.part")


def object_name(base: str, index: int) -> str:
    """The ``index``-th object of a sink: the named one, then ``<name>-0001`` …"""
    return base if index == 0 else f"{base[:248]}-{index:04d}"


def _size(data: dict[str, str]) -> int:
    return sum(len(k.encode()) + len(v.encode()) for k, v in data.items())


def _cut(body: bytes, room: int) -> list[bytes]:
    """``body`` in pieces of at most ``room`` bytes, each ending on a character boundary (a
    ConfigMap value is text, so no piece may split a UTF-8 sequence)."""
    pieces = []
    start = 0
    while start < len(body):
        end = min(start + room, len(body))
        while end < len(body) and end > start and (body[end] & 0xC0) == 0x80:
            end -= 1  # a continuation byte: back off to the character's first byte
        pieces.append(body[start:end])
        start = end
    return pieces


@dataclass
class _Object:
    name: str
    data: dict[str, str]
    version: str | None  # None: not stored yet
    changed: bool = False

    @property
    def used(self) -> int:
        return _size(self.data)


@dataclass
class ConfigMapSink:
    """Envelopes into ConfigMap ``name`` (and its rollovers) of ``namespace`` through
    ``client``; ``ident`` names the sink (``<namespace>/<BurnInSink name>``)."""

    client: Client
    namespace: str
    name: str
    ident_name: str = ""
    budget: int = BUDGET_BYTES
    _objects: list[_Object] = field(default_factory=list)

    @property
    def ident(self) -> str:
        return self.ident_name or f"configmap={self.namespace}/{self.name}"

    def send(self, envelope: Envelope, body: bytes, timeout: float) -> None:
        key = str(envelope.get("deliveryId", ""))
        if not _ID.fullmatch(key):
            raise DeliveryError(f"{self.ident}: {key!r} is not a deliveryId", permanent=True)
        try:
            objects = self._read()
            if _held(objects, key) == body:
                return  # identical: nothing to do (idempotent)
            for obj in objects:
                for stale in [k for k in obj.data if k == key or _part_of(k) == key]:
                    del obj.data[stale]
                    obj.changed = True
            for piece_key, value in self._pieces(key, body):
                target = self._room_for(objects, piece_key, value)
                target.data[piece_key] = value
                target.changed = True
            for obj in objects:
                if obj.changed:
                    self._write(obj)
        except NotFound as e:  # the namespace went away meanwhile
            raise DeliveryError(f"{self.ident}: {e}") from e
        except BackendError as e:  # 409 (lost a race), the API away: the next attempt reads
            raise DeliveryError(f"{self.ident}: {e}") from e

    def _read(self) -> list[_Object]:
        """Every object of the sink, read fresh: the named one (empty if missing) and each
        rollover until the first that does not exist."""
        objects: list[_Object] = []
        for index in range(MAX_OBJECTS + 1):
            name = object_name(self.name, index)
            found = _get(self.client, self.namespace, name)
            if found is None:
                if index == 0:
                    objects.append(_Object(name, {}, None))
                    continue
                break
            meta = found.get("metadata") or {}
            data = {str(k): str(v) for k, v in (found.get("data") or {}).items()}
            objects.append(_Object(name, data, str(meta.get("resourceVersion") or "")))
        return objects

    def _pieces(self, key: str, body: bytes) -> list[tuple[str, str]]:
        if len(key) + len(body) <= self.budget:
            return [(key, body.decode())]
        room = self.budget - len(f"{key}.0000-of-0000{PART_SUFFIX}")
        cut = _cut(body, room) if room > 0 else []
        if not cut or len(cut) > MAX_OBJECTS:
            raise DeliveryError(
                f"{self.ident}: {key} is {len(body)} bytes, more than {MAX_OBJECTS} ConfigMaps "
                f"of {self.budget} bytes can hold",
                permanent=True,
            )
        count = len(cut)
        return [
            (f"{key}.{i + 1:04d}-of-{count:04d}{PART_SUFFIX}", piece.decode())
            for i, piece in enumerate(cut)
        ]

    def _room_for(self, objects: list[_Object], key: str, value: str) -> _Object:
        """The first object with room for this entry; a new rollover when none has."""
        size = len(key.encode()) + len(value.encode())
        for obj in objects:
            if obj.used + size <= self.budget:
                return obj
        if len(objects) > MAX_OBJECTS:
            raise DeliveryError(f"{self.ident}: every rollover object is full", permanent=True)
        made = _Object(object_name(self.name, len(objects)), {}, None)
        objects.append(made)
        return made

    def _write(self, obj: _Object) -> None:
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": obj.name, "namespace": self.namespace},
            "data": obj.data,
        }
        if obj.version is None:
            with api_call(f"create ConfigMap {self.namespace}/{obj.name}"):
                self.client.create(_configmap(body), namespace=self.namespace)
            return
        body["metadata"]["resourceVersion"] = obj.version
        with api_call(f"replace ConfigMap {self.namespace}/{obj.name}"):
            self.client.replace(_configmap(body))


def _configmap(body: dict[str, Any]) -> ConfigMap:
    return cast(ConfigMap, ConfigMap.from_dict(body))


def _get(client: Client, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        with api_call(f"get ConfigMap {namespace}/{name}"):
            return as_dict(client.get(CONFIGMAPS, name, namespace=namespace))
    except NotFound:
        return None


def _part_of(key: str) -> str | None:
    match = _PART.fullmatch(key)
    return match.group(1) if match else None


def _held(objects: list[_Object], key: str) -> bytes | None:
    """The envelope stored under ``key`` (whole, or its parts joined), None when absent or
    incomplete."""
    for obj in objects:
        if key in obj.data:
            return obj.data[key].encode()
    parts: dict[int, tuple[int, str]] = {}
    for obj in objects:
        for k, v in obj.data.items():
            match = _PART.fullmatch(k)
            if match and match.group(1) == key:
                parts[int(match.group(2))] = (int(match.group(3)), v)
    counts = {count for count, _ in parts.values()}
    if len(counts) != 1:
        return None
    [count] = counts
    if sorted(parts) != list(range(1, count + 1)):
        return None
    return "".join(parts[i][1] for i in range(1, count + 1)).encode()


def read_sink(client: Client, namespace: str, name: str) -> dict[str, Envelope]:
    """Every envelope a ConfigMap sink holds, by deliveryId (incomplete part sets left out)."""
    sink = ConfigMapSink(client, namespace, name)
    objects = sink._read()
    keys = {k for obj in objects for k in obj.data if _ID.fullmatch(k)}
    keys |= {p for obj in objects for k in obj.data if (p := _part_of(k)) is not None}
    out: dict[str, Envelope] = {}
    for key in sorted(keys):
        held = _held(objects, key)
        if held is not None:
            value = json.loads(held)
            if isinstance(value, dict):
                out[key] = value
    return out
