"""The ConfigMap sink's semantics as a folder (specs/burnin.md §5.6), for the simulator and
this host: one entry per ``deliveryId``, the envelope JSON as its value.

An entry is written whole (temporary file, ``fsync``, rename) so a reader never sees half of
one. An identical existing entry is left alone; a different one is replaced (a re-sent terminal
envelope may carry more results).

Like a ConfigMap, one object of the sink has a budget of 900 KiB (keys and values together).
Rather than refusing a run once the first object is full, the sink shards, as an operator is
told to: the folder itself is the first object, ``shard-0001/``, ``shard-0002/`` … the next
ones, each kept under the budget (a ConfigMap ``results`` becomes ``results``,
``results-0001`` …). An envelope too big for any one object — the terminal envelope of a
run of a few hundred nodes carries every result — is stored as numbered parts
``<deliveryId>.0001-of-0003.part`` …, each in an object with room for it; the parts joined in
order are the envelope's bytes. Readers (:func:`entries`, :func:`read_entry`) put the parts
back together and skip an entry whose parts are not all there yet. docs/sinks.md records this.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from glimmer.api.budget import budget, over_budget
from glimmer.sinks.envelope import Envelope
from glimmer.sinks.errors import DeliveryError

BUDGET_BYTES = 921_600  # 900 KiB, the ConfigMap sink's object budget
SUFFIX = ".json"
PART_SUFFIX = ".part"
SHARD_PREFIX = "shard-"
_ID = re.compile(r"[0-9a-f]{32}")
_PART = re.compile(r"([0-9a-f]{32})\.(\d{4})-of-(\d{4})\.part")
_SHARD = re.compile(r"shard-\d{4}")
_MAX_PARTS = 9_999


def shards(root: Path) -> list[Path]:
    """The objects of a folder sink, in order: the folder, then its ``shard-NNNN`` folders."""
    if not root.is_dir():
        return []
    more = sorted(p for p in root.iterdir() if _SHARD.fullmatch(p.name) and p.is_dir())
    return [root, *more]


def entries(root: Path) -> dict[str, list[Path]]:
    """Every delivery a folder sink holds: ``deliveryId`` → its file, or its parts in order.
    An envelope whose parts are not all present (being written, or half deleted) is left out."""
    whole: dict[str, list[Path]] = {}
    parts: dict[str, dict[int, tuple[int, Path]]] = {}
    for shard in shards(root):
        for path in sorted(shard.iterdir()):
            if path.suffix == SUFFIX and _ID.fullmatch(path.stem):
                whole[path.stem] = [path]
                continue
            match = _PART.fullmatch(path.name)
            if match is not None:
                key, index, count = match.group(1), int(match.group(2)), int(match.group(3))
                parts.setdefault(key, {})[index] = (count, path)
    for key, found in parts.items():
        counts = {count for count, _ in found.values()}
        if key in whole or len(counts) != 1:
            continue
        [count] = counts
        if sorted(found) == list(range(1, count + 1)):
            whole[key] = [found[i][1] for i in range(1, count + 1)]
    return whole


def read_entry(paths: list[Path]) -> Envelope | None:
    """The envelope stored in ``paths`` (one file, or parts in order); None when it is not one
    (a foreign file, a part deleted meanwhile). One over the budget of a sink envelope, all
    its parts together, is refused (InputError) before it is read."""
    limit = budget("sink-envelope")
    try:
        size = sum(p.stat().st_size for p in paths)
    except OSError:
        return None
    if size > limit.max_bytes:
        raise over_budget(size, limit, str(paths[0]))
    try:
        value: Any = json.loads(b"".join(p.read_bytes() for p in paths))
    except (OSError, ValueError):
        return None
    if isinstance(value, dict) and "deliveryId" in value:
        return value
    return None


def read_directory(root: Path) -> Iterator[tuple[Path, Envelope]]:
    """Every envelope of a folder sink (by ``deliveryId``), with the first file that holds it."""
    for _, paths in sorted(entries(root).items()):
        envelope = read_entry(paths)
        if envelope is not None:
            yield paths[0], envelope


class DirectorySink:
    """Entries ``<deliveryId>.json`` (or its parts) in ``root`` and its shards."""

    def __init__(self, root: Path, *, name: str = "", budget: int = BUDGET_BYTES) -> None:
        self.root = root
        self.budget = budget
        self._ident = name or f"dir={root}"
        # Read from the folder at the first send, then kept up to date by this sink.
        self._held: dict[str, list[Path]] | None = None
        self._used: dict[Path, int] = {}

    @property
    def ident(self) -> str:
        return self._ident

    def send(self, envelope: Envelope, body: bytes, timeout: float) -> None:
        key = str(envelope.get("deliveryId", ""))
        if not _ID.fullmatch(key):
            raise DeliveryError(f"{self.root}: {key!r} is not a deliveryId", permanent=True)
        try:
            held = self._load()
            before = held.get(key)
            if before is not None and _same(before, body):
                return  # identical: nothing to do (idempotent)
            pieces = self._pieces(key, body)
            if before is not None:
                self._drop(before)
            held[key] = [
                self._write(self._room_for(name, data), name, data) for name, data in pieces
            ]
        except OSError as e:
            raise DeliveryError(f"write {self.root}/{key}: {e.strerror or e}") from e

    def _load(self) -> dict[str, list[Path]]:
        if self._held is None:
            self.root.mkdir(parents=True, exist_ok=True)
            self._held = entries(self.root)
            self._used = {shard: _usage(shard) for shard in shards(self.root)}
        return self._held

    def _pieces(self, key: str, body: bytes) -> list[tuple[str, bytes]]:
        name = key + SUFFIX
        if len(name) + len(body) <= self.budget:
            return [(name, body)]
        room = self.budget - len(f"{key}.0000-of-0000{PART_SUFFIX}")
        count = -(-len(body) // room)
        if room <= 0 or count > _MAX_PARTS:
            raise DeliveryError(
                f"{self.root}: {key} is {len(body)} bytes, more than {_MAX_PARTS} objects of "
                f"{self.budget} bytes can hold",
                permanent=True,
            )
        return [
            (f"{key}.{i + 1:04d}-of-{count:04d}{PART_SUFFIX}", body[i * room : (i + 1) * room])
            for i in range(count)
        ]

    def _room_for(self, name: str, data: bytes) -> Path:
        """The first object with room for this file; a new shard when none has (every file
        fits an empty object: :meth:`_pieces` cut it so)."""
        size = len(name) + len(data)
        for shard, used in self._used.items():
            if used + size <= self.budget:
                return shard
        numbers = [int(s.name.removeprefix(SHARD_PREFIX)) for s in self._used if s != self.root]
        shard = self.root / f"{SHARD_PREFIX}{max(numbers, default=0) + 1:04d}"
        shard.mkdir()
        self._used[shard] = 0
        return shard

    def _write(self, shard: Path, name: str, data: bytes) -> Path:
        path = shard / name
        tmp = shard / (name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        self._used[shard] = self._used.get(shard, 0) + len(name) + len(data)
        return path

    def _drop(self, paths: list[Path]) -> None:
        for path in paths:
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                continue
            path.unlink()
            self._used[path.parent] = max(0, self._used.get(path.parent, 0) - len(path.name) - size)


def _same(paths: list[Path], body: bytes) -> bool:
    """Whether the entry in ``paths`` holds exactly ``body``. Sizes are compared first, so an
    entry is read only when it is as big as the body (never a foreign file of any size)."""
    try:
        if sum(p.stat().st_size for p in paths) != len(body):
            return False
        return b"".join(p.read_bytes() for p in paths) == body
    except OSError:
        return False


def _usage(shard: Path) -> int:
    """What an object holds by the ConfigMap's measure: every key and value."""
    total = 0
    for path in shard.iterdir():
        if path.is_file() and (path.suffix == SUFFIX or path.suffix == PART_SUFFIX):
            total += len(path.name) + path.stat().st_size
    return total
