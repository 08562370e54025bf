"""``parse``: one runner execution's exit code and stdout, turned into what it declared.

The parser is total: whatever bytes a runner (or a crash, or a truncated log) produced, it
returns a :class:`ParsedResult` and never raises. Values stay strings; numbers are read only when
a gate is evaluated, so a malformed value fails that gate instead of breaking the harvest. What it
reads and keeps is bounded (:mod:`glimmer.contract.bounds`), so its memory does not grow with the
size of the log, and a bounded result says so in its message.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from glimmer.contract.artifacts import plain_lines, scan
from glimmer.contract.bounds import (
    KEY_BYTES,
    MAX_NAMES,
    MAX_REJECTED,
    MESSAGE_BYTES,
    VALUE_BYTES,
    Bounding,
    clamp_text,
    log_tail,
)
from glimmer.contract.exitcode import classify_exit
from glimmer.contract.names import canonical_name, validate_metric_name
from glimmer.contract.text import trim_space
from glimmer.contract.vocab import Artifact, ParsedResult

UNMEASURABLE = "n/a"  # the only sentinel; "unknown", "none" and "" are ordinary values
# Lines longer than this are decided afresh wherever they appear (never remembered).
_KEPT_LINE_BYTES = 256
# A key's canonical name (or its refusal) depends only on the kind and the key, and a fleet's
# runs print the same few dozen keys in every output: each (kind, key) is resolved once per
# process (at 4,096 nodes the names were validated 1.6M times, 6 % of the run). Bounded, so that
# outputs of ever new keys cannot grow it; past the bound a key is resolved per output.
_RESOLVED_KEYS = 8192
# The same holds of whole lines: a line says the same whatever output it is in, and nine in ten
# lines a fleet's runners print were printed before, by another node ("ecc_errors=0") or by the
# same node's earlier test (its serials, its hostname). What is remembered is what was met
# lately (:class:`_RecentLines`): keeping the first lines met for good filled the memory at
# 16,384 nodes with lines of nodes long finished, and 486,515 lines were then decided afresh
# (32x those at 4,096 nodes, for 4x the outputs).
_KEPT_LINES = 16384  # per generation: at most two, about 16 MB
_INTERNED_VALUE_BYTES = 64
_resolved: dict[tuple[str, str], str | None] = {}


class _Line(NamedTuple):
    """What one line says. ``name`` set: a metric (``value`` None: declared ``n/a``).
    ``rejected`` set: a key the grammar refuses. Neither: a message candidate (``text``).
    A named tuple: one is made per line of every output, and a frozen dataclass cost three
    times as much to make."""

    text: str = ""
    name: str | None = None
    value: str | None = None
    value_bytes: int = 0
    rejected: str | None = None
    key_too_long: bool = False


_BLANK = _Line()


class _RecentLines:
    """What lines said, (kind, line) -> :class:`_Line`, for the lines met lately: two
    generations, the young one filled until it holds ``bound`` lines, then made the old one
    (the old one dropped). A line found in the old generation is carried into the young one, so
    a line in steady use stays, and one of a node long finished goes within two generations.
    Memory is bounded (2x ``bound``) and no lookup costs more than two dict reads."""

    def __init__(self, bound: int) -> None:
        self.bound = bound
        self.young: dict[tuple[str, bytes], _Line] = {}
        self.old: dict[tuple[str, bytes], _Line] = {}

    def recall(self, key: tuple[str, bytes]) -> _Line | None:
        """What ``key`` said if it is in the old generation (the young one was asked first)."""
        said = self.old.get(key)
        if said is not None:
            self.keep(key, said)
        return said

    def keep(self, key: tuple[str, bytes], said: _Line) -> None:
        young = self.young
        if len(young) >= self.bound:
            self.old, self.young = young, {}
            young = self.young
        young[key] = said


_lines = _RecentLines(_KEPT_LINES)


def _resolve(kind: str, key: str) -> str | None:
    """The canonical name of ``key`` printed by ``kind``, or None when the grammar refuses it."""
    known = (kind, key)
    try:
        return _resolved[known]
    except KeyError:
        pass
    name = canonical_name(kind, key)
    # Interned: the same few dozen names recur in every result a fleet's run keeps (a
    # 16,384-node run held a copy of each per result: ~150 MB of equal strings).
    resolved = sys.intern(name) if validate_metric_name(name) is None else None
    if len(_resolved) < _RESOLVED_KEYS:
        _resolved[known] = resolved
    return resolved


def _read_line(kind: str, raw_line: bytes) -> _Line:
    """What ``raw_line`` says: the plain lines a runner prints take :func:`_read_plain`, any
    other the contract's rules one by one (they give the same for plain lines)."""
    if raw_line.isascii():
        said = _read_plain(kind, raw_line.decode("ascii"))
        if said is not None:
            return said
    return _read_rules(kind, raw_line)


def _read_plain(kind: str, line: str) -> _Line | None:
    """A metric line with nothing to trim, cut or refuse, read without the work of
    :func:`_read_rules` (a fleet's outputs are almost all such lines: it was 7 % of a 1,024-node
    run); None for any other line. ``line`` is ASCII, where Go's whitespace is the characters
    up to the space, so a first and last character above it leave nothing to trim."""
    key, eq, value = line.partition("=")
    if (
        not eq
        or not key
        or not value
        or key[0] <= " "
        or key[-1] <= " "
        or value[0] <= " "
        or value[-1] <= " "
        or len(key) > KEY_BYTES
        or len(value) > _INTERNED_VALUE_BYTES
        or " " in key
        or "\t" in key
    ):
        return None
    name = _resolve(kind, key)
    if name is None or value.lower() == UNMEASURABLE:
        return None
    # Positional: a named tuple's keyword constructor is a Python function, its dearest part.
    return tuple.__new__(_Line, ("", name, sys.intern(value), len(value), None, False))


def _read_rules(kind: str, raw_line: bytes) -> _Line:
    line = trim_space(raw_line.decode("utf-8", "replace"))
    if not line:
        return _BLANK
    eq = line.find("=")
    if eq <= 0:
        return _Line(text=line)
    key = trim_space(line[:eq])
    if not key or " " in key or "\t" in key:
        return _Line(text=line)
    clamped, key_bytes = clamp_text(key, KEY_BYTES)
    if key_bytes > KEY_BYTES:
        # Never a legal name, and not to be stored whole in the rejected list either.
        return _Line(rejected=clamped, key_too_long=True)
    name = _resolve(kind, key)
    if name is None:
        return _Line(rejected=key)
    value = trim_space(line[eq + 1 :])
    if value.lower() == UNMEASURABLE:
        return _Line(name=name)
    kept, size = clamp_text(value, VALUE_BYTES)
    if size > VALUE_BYTES:
        kept = f"{kept} (cut at {VALUE_BYTES} of {size} bytes)"
    elif size <= _INTERNED_VALUE_BYTES:
        # Interned too: a fleet's readings repeat ("0", "8", a driver version, a part's name):
        # a 512-node run kept 98,816 values of 5,232 distinct strings.
        kept = sys.intern(kept)
    return _Line(name=name, value=kept, value_bytes=size)


def parse(kind: str, stdout: str | bytes, exit_code: int) -> ParsedResult:
    """Parse a runner's stdout (the pod log) under the contract's rules.

    Artifacts are fenced off first. Every other non-blank line is either a ``key=value`` metric
    (split at the first ``=``; the key canonicalised for ``kind`` and checked against the
    grammar) or a message candidate; the last message candidate becomes the message. A value of
    ``n/a`` (any case) declares the metric unmeasurable. The last occurrence of a name wins,
    across measured and unmeasurable alike. Keys whose canonical form the grammar rejects are
    listed (raw, once per line) in ``invalid_names`` and otherwise ignored.
    """
    tail = log_tail(stdout)
    bounding = Bounding(tail)
    data = tail.data
    # Only exit 2 looks for a skip marker (anywhere in stdout); spare big logs a second decode.
    marker_text = data.decode("utf-8", "replace") if exit_code == 2 else ""
    outcome = classify_exit(exit_code, marker_text)
    artifacts: list[Artifact] = []

    metrics: dict[str, str] = {}
    unmeasurable: set[str] = set()
    invalid: list[str] = []
    message = ""
    recent = _lines.young
    # A runner's output is split at once, and a line met before needs no blank test (only
    # non-blank lines are ever decided): the line-by-line scan was a tenth of the parse.
    lines = plain_lines(data)
    for raw_line in scan(data, artifacts) if lines is None else lines:
        known = (kind, raw_line)
        said = recent.get(known)
        if said is None:
            said = _lines.recall(known)
            if said is None:
                if lines is not None and not raw_line.strip():
                    continue  # blank: scan skips such lines itself
                said = _read_line(kind, raw_line)
                if len(raw_line) <= _KEPT_LINE_BYTES:
                    _lines.keep(known, said)
            recent = _lines.young  # a new generation may have begun
        name = said.name
        if name is None:
            if said.rejected is None:
                message = said.text or message  # blank lines are no candidates
            elif len(invalid) < MAX_REJECTED:
                invalid.append(said.rejected)
            else:
                bounding.rejected_unlisted += 1
            bounding.keys_refused += said.key_too_long
            continue
        new_name = name not in metrics and name not in unmeasurable
        if new_name and len(metrics) + len(unmeasurable) >= MAX_NAMES:
            bounding.names_dropped += 1
            continue
        if said.value is None:
            unmeasurable.add(name)
            metrics.pop(name, None)
            bounding.values_cut.pop(name, None)
            continue
        if said.value_bytes > VALUE_BYTES:
            bounding.values_cut[name] = said.value_bytes
        else:
            bounding.values_cut.pop(name, None)  # a later short reading stands as printed
        metrics[name] = said.value
        unmeasurable.discard(name)

    message, bounding.message_bytes = clamp_text(message, MESSAGE_BYTES)
    note = bounding.note()
    if note:
        message = f"{message} {note}" if message else note
    return ParsedResult(
        verdict=outcome.verdict,
        exit_code=exit_code,
        metrics=metrics,
        unmeasurable=frozenset(unmeasurable),
        invalid_names=tuple(invalid),
        message=message,
        undeclared_skip=outcome.undeclared_skip,
        artifacts=tuple(artifacts),
    )
