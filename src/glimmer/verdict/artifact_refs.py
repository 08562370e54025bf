"""Where a runner's artifacts are kept, by rules that hold on every substrate (§3.6, "Operator
storage"): the object and key an artifact is stored under, what is refused, the object's budget,
and the refs a result carries — one per artifact, de-duplicated on re-harvest, accumulated
across attempts.

A substrate stores; these rules decide. An artifact that cannot be kept (refused by the scanner,
a name that is not a plain file name, a key too long, too large, past the budget, or a write that
failed) becomes a ref whose ``dropped`` says why, with no object, key or digest — never an error
and never a change of phase: evidence is lost, the verdict is not.

The budget is counted the way the object holds the entries: every key and every stored value,
text as its UTF-8 bytes and binary as its base64 text (what the API server keeps and limits).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from glimmer.api.result import ArtifactRef
from glimmer.contract.artifacts import MAX_PAYLOAD_BYTES
from glimmer.contract.vocab import Artifact

BUDGET_BYTES = 921_600  # 900 KiB: keys and values of the run's object together
MAX_KEY_BYTES = 253
# Refused, never sanitised: a rewritten name could collide with another artifact's, and the
# name is what a reader looks the evidence up by.
_NAME = re.compile(r"[A-Za-z0-9._-]+")
WRITE_FAILED = "write failed"


def store_name(run: str) -> str:
    """The run-owned object every artifact of ``run`` is stored in (``<run>-artifacts``)."""
    return f"{run}-artifacts"


def artifact_key(test: str, pod_name: str, name: str) -> str:
    """The key of one artifact: ``<test>.<podName>.<artifactName>``."""
    return f"{test}.{pod_name}.{name}"


def name_refusal(name: str) -> str | None:
    """Why an artifact name cannot be a key's last part (None: it can)."""
    if not _NAME.fullmatch(name) or name in (".", ".."):
        return f"artifact name {name!r} must consist only of [A-Za-z0-9._-] and not be . or .."
    return None


def is_text(payload: bytes) -> bool:
    """Whether ``payload`` is valid UTF-8 (stored as text; otherwise as binary data)."""
    try:
        payload.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def stored_value(payload: bytes) -> tuple[bool, str]:
    """(binary, value): the payload as the object holds it — its text, or its base64."""
    if is_text(payload):
        return False, payload.decode("utf-8")
    return True, base64.b64encode(payload).decode("ascii")


def entry_bytes(key: str, value: str) -> int:
    """What one entry costs of the budget: its key and its stored value."""
    return len(key.encode()) + len(value.encode())


def dropped_ref(artifact: Artifact, reason: str) -> ArtifactRef:
    """The ref of an artifact that was not kept: no object, key or digest."""
    return ArtifactRef(
        name=artifact.name,
        media_type=artifact.media_type or None,
        size_bytes=artifact.size_bytes or None,
        dropped=reason,
    )


def stored_ref(artifact: Artifact, config_map: str, key: str) -> ArtifactRef:
    """The ref of an artifact stored under ``key`` of ``config_map``."""
    return ArtifactRef(
        name=artifact.name,
        media_type=artifact.media_type or None,
        size_bytes=len(artifact.payload),
        digest=artifact.digest or None,
        config_map=config_map,
        key=key,
    )


@dataclass(frozen=True)
class Entry:
    """One entry to write: its key, whether it goes to binary data, and its stored value."""

    key: str
    binary: bool
    value: str


@dataclass(frozen=True)
class Placement:
    """What one execution's artifacts come to: the entries to write (in order) and one ref per
    artifact (stored refs name their entry, and hold only once the write succeeded)."""

    config_map: str
    entries: tuple[Entry, ...]
    refs: tuple[ArtifactRef, ...]


def _refusal(artifact: Artifact, key: str) -> str | None:
    if artifact.dropped:
        return artifact.dropped
    refused = name_refusal(artifact.name)
    if refused is not None:
        return refused
    if not _NAME.fullmatch(key):
        # The test's or the pod's name, never the runner's: a key the object could not hold.
        return f"artifact key {key!r} must consist only of [A-Za-z0-9._-]"
    if len(key.encode()) > MAX_KEY_BYTES:
        return f"artifact key {key!r} is {len(key.encode())} bytes, over {MAX_KEY_BYTES}"
    if len(artifact.payload) > MAX_PAYLOAD_BYTES:
        return (
            f"artifact payload is {len(artifact.payload)} bytes, over the "
            f"{MAX_PAYLOAD_BYTES}-byte limit"
        )
    return None


def place(
    config_map: str,
    test: str,
    pod_name: str,
    artifacts: Sequence[Artifact],
    held: Mapping[str, str],
    budget: int = BUDGET_BYTES,
) -> Placement:
    """Decide where each of an execution's ``artifacts`` goes, given what the object already
    ``held`` (key -> stored value, text and binary alike; empty when it does not exist).

    An entry already held with the same value is not written again (a re-harvest stores
    nothing twice); one held with another value is replaced, its old size given back first.
    """
    used = sum(entry_bytes(k, v) for k, v in held.items())
    entries: dict[str, Entry] = {}
    refs: list[ArtifactRef] = []
    for artifact in artifacts:
        key = artifact_key(test, pod_name, artifact.name)
        refused = _refusal(artifact, key)
        if refused is not None:
            refs.append(dropped_ref(artifact, refused))
            continue
        binary, value = stored_value(artifact.payload)
        if held.get(key) == value and key not in entries:
            refs.append(stored_ref(artifact, config_map, key))
            continue
        before = entries[key].value if key in entries else held.get(key)
        freed = entry_bytes(key, before) if before is not None else 0
        cost = entry_bytes(key, value)
        if used - freed + cost > budget:
            # Worded the same for every attempt, so that one artifact refused by a full object
            # attempt after attempt (a long soak) is one ref, not one per attempt.
            refs.append(
                dropped_ref(
                    artifact,
                    f"ConfigMap {config_map} has no room for it within its {budget}-byte "
                    "budget (keys and values)",
                )
            )
            continue
        used += cost - freed
        entries[key] = Entry(key, binary, value)
        refs.append(stored_ref(artifact, config_map, key))
    return Placement(config_map, tuple(entries.values()), tuple(refs))


def write_failed(placement: Placement, reason: str) -> tuple[ArtifactRef, ...]:
    """The refs of ``placement`` once its write failed: every ref naming an entry that was to
    be written becomes dropped (``write failed: <reason>``); the rest stand as decided."""
    pending = {e.key for e in placement.entries}
    return tuple(
        ref.model_copy(
            update={
                "config_map": None,
                "key": None,
                "digest": None,
                "dropped": f"{WRITE_FAILED}: {reason}",
            }
        )
        if ref.key in pending
        else ref
        for ref in placement.refs
    )


def identity(ref: ArtifactRef) -> tuple[str, ...]:
    """What makes two refs the same: the key of a stored one, the name and reason of a
    dropped one."""
    if ref.key:
        return ("key", ref.key)
    return ("dropped", ref.name, ref.dropped or "")


def merge_refs(
    kept: Iterable[ArtifactRef] | None, new: Iterable[ArtifactRef]
) -> list[ArtifactRef] | None:
    """``kept`` followed by each ref of ``new`` not already there (a re-harvest of the same
    execution adds nothing; another attempt's refs accumulate); None when there are none."""
    out = list(kept or ())
    seen = {identity(r) for r in out}
    for ref in new:
        if identity(ref) not in seen:
            seen.add(identity(ref))
            out.append(ref)
    return out or None
