"""Artifacts: non-metric evidence a runner fences on stdout.

    -----BEGIN BURNIN ARTIFACT <name> <mediaType>-----
    <payload lines>
    -----END BURNIN ARTIFACT-----

The scanner works on bytes because a payload need not be UTF-8 (it is stored as binary data when
it is not). Payload lines never reach the metric scanner. A fence that cannot be honoured (bad
header, nested BEGIN, no END, too large) still yields an :class:`Artifact` whose ``dropped``
says why: a refusal is recorded, never silently lost, and never changes a verdict.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from glimmer.contract.text import clamp_utf8, fields
from glimmer.contract.vocab import Artifact

BEGIN = b"-----BEGIN BURNIN ARTIFACT"
END = b"-----END BURNIN ARTIFACT-----"
_CLOSE = b"-----"
MAX_PAYLOAD_BYTES = 256 * 1024
HEADER_CLAMP_BYTES = 120


@dataclass(frozen=True)
class Extraction:
    """What is left for the metric scanner, and the artifacts found, in stdout order."""

    lines: tuple[bytes, ...]  # CR-stripped lines outside every fence
    artifacts: tuple[Artifact, ...]


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line


def opens_fence(line: bytes) -> bool:
    """True when a CR-stripped line is a BEGIN line.

    What follows the keyword must be empty or start with a blank, so that a longer word such as
    ``ARTIFACTS`` does not open a fence.
    """
    if not (line.startswith(BEGIN) and line.endswith(_CLOSE)):
        return False
    if len(line) < len(BEGIN) + len(_CLOSE):
        return False
    inner = line[len(BEGIN) : len(line) - len(_CLOSE)]
    return inner == b"" or inner[:1] in (b" ", b"\t")


def _header(line: bytes) -> tuple[str, str] | str:
    """(name, mediaType) from a BEGIN line, or the reason the header is refused."""
    inner = line[len(BEGIN) : len(line) - len(_CLOSE)]
    parts = fields(inner.decode("utf-8", "replace"))
    if len(parts) == 2:
        return parts[0], parts[1]
    shown = clamp_utf8(inner.strip(b" \t"), HEADER_CLAMP_BYTES).decode("utf-8", "replace")
    return f"artifact header must be '<name> <mediaType>', got {shown!r}"


def extract_artifacts(stdout: bytes) -> Extraction:
    """Split ``stdout`` into ordinary lines and fenced artifacts (see the module docstring)."""
    raw = stdout.split(b"\n")
    if raw[-1] == b"":
        raw.pop()  # a final newline ends the last line; it does not start an empty one
    lines: list[bytes] = []
    artifacts: list[Artifact] = []
    i = 0
    while i < len(raw):
        line = _strip_cr(raw[i])
        i += 1
        if not opens_fence(line):
            lines.append(line)
            continue
        header = _header(line)
        name, media_type = header if isinstance(header, tuple) else ("", "")
        payload: list[bytes] = []
        size = 0
        ending = "unterminated"
        while i < len(raw):
            inner = _strip_cr(raw[i])
            if inner == END:
                i += 1
                ending = "closed"
                break
            if opens_fence(inner):
                # Leave i on the nested BEGIN so the outer loop scans from it.
                ending = "nested"
                break
            size += len(inner) + 1
            if size <= MAX_PAYLOAD_BYTES:
                payload.append(inner)
            i += 1
        artifacts.append(_settle(name, media_type, header, ending, payload, size))
    return Extraction(tuple(lines), tuple(artifacts))


def _settle(
    name: str,
    media_type: str,
    header: tuple[str, str] | str,
    ending: str,
    payload: list[bytes],
    size: int,
) -> Artifact:
    if isinstance(header, str):
        return Artifact(name, media_type, size_bytes=size, dropped=header)
    if ending == "nested":
        return Artifact(
            name,
            media_type,
            size_bytes=size,
            dropped="artifact fence interrupted by another BEGIN line before its END line",
        )
    if ending == "unterminated":
        return Artifact(
            name,
            media_type,
            size_bytes=size,
            dropped="artifact fence has no END line; it consumed the rest of the output",
        )
    if size > MAX_PAYLOAD_BYTES:
        return Artifact(
            name,
            media_type,
            size_bytes=size,
            dropped=f"artifact payload is {size} bytes, over the {MAX_PAYLOAD_BYTES}-byte limit",
        )
    data = b"".join(p + b"\n" for p in payload)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    return Artifact(name, media_type, payload=data, size_bytes=len(data), digest=digest)
