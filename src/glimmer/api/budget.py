"""Byte budgets on every file glimmer reads, checked before the file is read.

A file over its budget is refused at once, with the budget in the message, instead of being
parsed for minutes first (a 50 MB Fleet used to take 98 s and 5 GB before its error). Each
budget is sized by the largest file glimmer itself writes of that kind, with headroom: a saved
run must hold the BurnInRun that ``glimmer run --output json`` writes for a 10,000-node fleet
(about 150 MB for the three-test smoke profile), a Fleet the 100,000-GPU fleets that
``glimmer fleet generate`` writes (about 2 MB per 80,000 GPUs).

The read itself is bounded too: a file that grows while it is read, or a pipe on stdin, is cut
at the budget rather than trusted to stop.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from glimmer.errors import InputError, Location

KiB = 1024
MiB = 1024 * KiB


@dataclass(frozen=True)
class Budget:
    """The most bytes one input of a kind may hold, and the words that name that kind."""

    what: str
    max_bytes: int


# Every input glimmer reads, with its budget. JSON resources are read by the JSON parser (fast,
# flat in memory per byte); YAML resources are composed node by node, so their budget is lower.
BUDGETS: dict[str, Budget] = {
    "resource-json": Budget("a JSON resource file", 512 * MiB),
    "resource-yaml": Budget("a YAML resource file", 64 * MiB),
    "fleet": Budget("a Fleet", 16 * MiB),
    "certification-result": Budget("a certification result", 64 * MiB),
    # One envelope (a folder sink's entry, its parts joined): the terminal envelope of a
    # 10,000-node run, which carries every result, is about 50 MB.
    "sink-envelope": Budget("a sink envelope", 512 * MiB),
    # A whole sink log (the outbox's outbox.jsonl, a file= sink read back): a 10,000-node run
    # writes about 103 MB (smoke) to 150 MB (acceptance) to a file= sink, and as much to the
    # outbox against a dead webhook. Both logs append run after run, so the budget holds several
    # such runs (7 of the largest); past it, flush the outbox or rotate the file.
    "sink-log": Budget("a sink log", 1024 * MiB),
    "ca-bundle": Budget("a CA bundle", 4 * MiB),
    "secret": Budget("a secret", 64 * KiB),
}


def budget(kind: str) -> Budget:
    """The budget of one kind of input (a key of :data:`BUDGETS`)."""
    return BUDGETS[kind]


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _limit(n: int) -> str:
    for unit, scale in (("GiB", 1024 * MiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


def over_budget(size: int, limit: Budget, name: str, *, at_least: bool = False) -> InputError:
    """The refusal of an input of ``size`` bytes (``at_least``: it was cut there)."""
    given = f"more than {_size(size)}" if at_least else _size(size)
    return InputError(
        f"file is {given}, over the {_limit(limit.max_bytes)} budget for {limit.what}",
        Location(file=name),
    )


def read_bounded(stream: BinaryIO, limit: Budget, name: str) -> bytes:
    """Read at most the budget from an open stream; refuse a stream that holds more."""
    data = stream.read(limit.max_bytes + 1)
    if len(data) > limit.max_bytes:
        raise over_budget(limit.max_bytes, limit, name, at_least=True)
    return data


def check_size(path: str | Path, kind: str, name: str | None = None) -> None:
    """Refuse a file over the budget of ``kind`` without reading it: for a file another library
    or reader opens (a CA bundle handed to the TLS layer). A file that cannot even be looked at
    is left to that reader, whose error says why in its own words."""
    shown = name if name is not None else str(path)
    limit = budget(kind)
    try:
        size = os.stat(path).st_size
    except ValueError:  # a NUL in the path: no file can be named so
        raise InputError("a path cannot hold a NUL character", Location(file=repr(shown))) from None
    except OSError:
        return
    if size > limit.max_bytes:
        raise over_budget(size, limit, shown)


def read_bytes(path: str | Path, kind: str, name: str | None = None) -> bytes:
    """The bytes of a file within the budget of ``kind``; refused (InputError) before reading
    when the file is larger, and on any OS error."""
    shown = name if name is not None else str(path)
    limit = budget(kind)
    try:
        with open(path, "rb") as stream:
            try:
                size = os.fstat(stream.fileno()).st_size
            except OSError:
                size = 0
            if size > limit.max_bytes:
                raise over_budget(size, limit, shown)
            return read_bounded(stream, limit, shown)
    except IsADirectoryError:
        raise InputError("is a folder, not a file", Location(file=shown)) from None
    except ValueError:  # a NUL in the path, as in check_size
        raise InputError("a path cannot hold a NUL character", Location(file=repr(shown))) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", Location(file=shown)) from None


def decode_utf8(data: bytes, name: str) -> str:
    """The text of a file's bytes; anything not UTF-8 (a binary file) is bad input naming the
    offset of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(
            f"not a UTF-8 text file (byte {e.start} is not UTF-8)", Location(file=name)
        ) from None


def read_text(path: str | Path, kind: str, name: str | None = None) -> str:
    """The UTF-8 text of a file within the budget of ``kind``."""
    shown = name if name is not None else str(path)
    return decode_utf8(read_bytes(path, kind, shown), shown)
