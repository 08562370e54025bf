"""The cordon stamp as a Slurm drain reason: the engine's node annotations in one line.

Slurm keeps one free-text reason per drained node and nothing else a run could write on it, so
the stamp a Kubernetes node carries as annotations (cordon-owner, prior-unschedulable, the heat
declaration; :mod:`glimmer.engine.keys`) travels as the drain reason, where ``sinfo -R`` shows
whose drain it is and any submit host reading the node sees it::

    glimmer:v1 store:3f9c2a71d0b4 owner:default/host-n1/0b6e prior:false
        heat:default/host-n1/0b6e/2026-12-01T23:00:00Z          (one line)

``store`` names the run store (one state directory on one submit host) whose run drained the
node, so a reaper only ever judges stamps its own store can answer for. Fields come in that
order, each at most once, ``store`` always; a value is percent-encoded outside a small safe
alphabet, so a space or an ``=`` (which would end the value in ``scontrol -o`` output) never
appears raw. Parsing is strict: anything that is not exactly what :func:`encode` writes — an
administrator's reason, a stamp of another version, a hand-edited one — is not a stamp, and a
node with such a reason is someone else's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from glimmer.engine.keys import CORDON_OWNER, HEAT_EXPECTED, PRIOR_UNSCHEDULABLE

PREFIX = "glimmer:v1"
# The annotation each field carries, in the order they are written.
FIELDS: tuple[tuple[str, str], ...] = (
    ("owner", CORDON_OWNER),
    ("prior", PRIOR_UNSCHEDULABLE),
    ("heat", HEAT_EXPECTED),
)
STAMPED = tuple(key for _, key in FIELDS)
# Left raw: readable owners (ns/name/uid) and RFC 3339 times; everything else is %XX.
SAFE = "/:"
_STORE = re.compile(r"[a-z0-9]{6,32}")
# Slurm appends "[user@time]" to a reason in ``scontrol show node`` (not in ``sinfo %E``).
_SUFFIX = re.compile(r" \[[^\[\]@ ]+@[^\[\] ]+\]$")


@dataclass(frozen=True)
class Stamp:
    """Whose drain it is (``store``) and the stamped annotations (a subset of
    :data:`STAMPED`; empty for a drain by glimmer that names no run)."""

    store: str
    annotations: Mapping[str, str] = field(default_factory=dict)

    @property
    def owner(self) -> str | None:
        return self.annotations.get(CORDON_OWNER)


def stamped(annotations: Mapping[str, str]) -> dict[str, str]:
    """The annotations a stamp carries (the engine's three keys), in :data:`FIELDS` order."""
    return {key: annotations[key] for key in STAMPED if key in annotations}


def encode(stamp: Stamp) -> str:
    """The drain reason of ``stamp``. ValueError for a store id that :func:`decode` would
    refuse, or an annotation a stamp does not carry (or empty)."""
    if not _STORE.fullmatch(stamp.store):
        raise ValueError(f"not a store id: {stamp.store!r}")
    extra = set(stamp.annotations) - set(STAMPED)
    if extra:
        raise ValueError(f"a stamp carries only {', '.join(STAMPED)}, not {sorted(extra)}")
    words = [PREFIX, f"store:{stamp.store}"]
    for name, key in FIELDS:
        value = stamp.annotations.get(key)
        if value is not None:
            if not value:
                raise ValueError(f"{key}: an empty value cannot be stamped")
            words.append(f"{name}:{quote(value, safe=SAFE)}")
    return " ".join(words)


def decode(reason: str) -> Stamp | None:
    """The stamp a drain reason is, or None when it is anything else (never a guess)."""
    words = reason.split(" ")
    if len(words) < 2 or words[0] != PREFIX:
        return None
    name, colon, store = words[1].partition(":")
    if name != "store" or not colon or not _STORE.fullmatch(store):
        return None
    annotations: dict[str, str] = {}
    expected = iter(FIELDS)
    for word in words[2:]:
        name, colon, raw = word.partition(":")
        if not colon or not raw:
            return None
        key = next((k for n, k in expected if n == name), None)  # in order, each once
        if key is None:
            return None
        try:
            value = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            return None
        if quote(value, safe=SAFE) != raw:
            return None  # not as encode writes it (a stray %, a raw character): hand-made
        annotations[key] = value
    return Stamp(store, annotations)


def bare_reason(reason: str) -> str:
    """A node's reason as written, without the ``[user@time]`` Slurm appends when showing it."""
    return _SUFFIX.sub("", reason.strip())
