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
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from glimmer.contract.text import clamp_utf8, fields
from glimmer.contract.vocab import Artifact

BEGIN = b"-----BEGIN BURNIN ARTIFACT"
END = b"-----END BURNIN ARTIFACT-----"
_CLOSE = b"-----"
MAX_PAYLOAD_BYTES = 256 * 1024
HEADER_CLAMP_BYTES = 120
MAX_HEADER_BYTES = 512


@dataclass(frozen=True)
class Extraction:
    """What is left for the metric scanner, and the artifacts found, in stdout order."""

    lines: tuple[bytes, ...]  # CR-stripped, non-blank lines outside every fence
    artifacts: tuple[Artifact, ...]


# A byte that is not ASCII whitespace: where the next non-blank line is. Finding it with one C
# search skips a run of blank lines of any length (100 MB of them took 27 s line by line).
_INK = re.compile(rb"[^ \t\n\r\f\v]")
# The start of a line that may open or close a fence; payload between two is taken in bulk.
_FENCE_CANDIDATE = re.compile(rb"^-----(?:BEGIN|END) BURNIN ARTIFACT", re.MULTILINE)


# Outputs up to this size with no fence in them are split in one go (see scan).
_SMALL_OUTPUT = 64 * 1024
_FENCE_WORD = b"BURNIN ARTIFACT"


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line


def _line_at(data: bytes, start: int) -> tuple[bytes, int]:
    """The CR-stripped line starting at ``start`` and where the next line starts."""
    end = data.find(b"\n", start)
    if end < 0:
        return _strip_cr(data[start:]), len(data)
    return _strip_cr(data[start:end]), end + 1


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
    shown = clamp_utf8(inner.strip(b" \t"), HEADER_CLAMP_BYTES).decode("utf-8", "replace")
    if len(inner) > MAX_HEADER_BYTES:
        # A name and a media type are short; a huge header would be stored in every ref.
        return f"artifact header is {len(inner)} bytes, over {MAX_HEADER_BYTES}: {shown!r}"
    parts = fields(inner.decode("utf-8", "replace"))
    if len(parts) == 2:
        return parts[0], parts[1]
    return f"artifact header must be '<name> <mediaType>', got {shown!r}"


@dataclass
class _Payload:
    """A fence's payload as it is read: CR-stripped lines, each ending in a newline."""

    size: int = 0
    chunks: list[bytes] = field(default_factory=list)

    def add(self, span: bytes) -> None:
        """Add whole lines (``span`` ends in a newline unless it ends the output)."""
        # Each line loses one trailing CR: exactly the CRs that stand before a newline.
        text = span.replace(b"\r\n", b"\n")
        if not span.endswith(b"\n"):
            text = _strip_cr(text) + b"\n"  # the output's last line, unterminated
        self.size += len(text)
        if self.size <= MAX_PAYLOAD_BYTES:
            self.chunks.append(text)


def _read_payload(data: bytes, pos: int) -> tuple[_Payload, str, int]:
    """The payload of a fence whose BEGIN line ended at ``pos``, how the fence ended
    (closed, nested, unterminated) and where scanning resumes."""
    payload = _Payload()
    while pos < len(data):
        found = _FENCE_CANDIDATE.search(data, pos)
        stop = found.start() if found else len(data)
        if stop > pos:
            payload.add(data[pos:stop])
        if found is None:
            break
        line, after = _line_at(data, stop)
        if line == END:
            return payload, "closed", after
        if opens_fence(line):
            return payload, "nested", stop  # the outer loop scans from the nested BEGIN
        payload.add(data[stop:after])  # a near miss (``ARTIFACTS``) is payload
        pos = after
    return payload, "unterminated", len(data)


def plain_lines(stdout: bytes) -> list[bytes] | None:
    """Every line of ``stdout``, blank ones included, when it is small and has no fence and no
    carriage return (what a runner prints): then the lines :func:`scan` yields are exactly its
    non-blank ones, and a caller that knows a line already (a parser's cache of lines it has
    decided) need not ask whether it is blank. None for any other output."""
    if len(stdout) <= _SMALL_OUTPUT and _FENCE_WORD not in stdout and b"\r" not in stdout:
        return stdout.split(b"\n")
    return None


def scan(stdout: bytes, artifacts: list[Artifact]) -> Iterator[bytes]:
    """Yield the non-blank lines outside every fence, appending each fence to ``artifacts``.

    Lazy, so that parsing holds one line at a time rather than the whole output's lines.
    """
    if len(stdout) <= _SMALL_OUTPUT and _FENCE_WORD not in stdout:
        # The common case, a runner's few dozen lines and no fence: split at once. bytes.strip()
        # strips exactly the blanks _INK skips, so the lines are the ones the walk below yields.
        for line in stdout.split(b"\n"):
            if line.strip():
                yield _strip_cr(line)
        return
    pos = 0
    while True:
        ink = _INK.search(stdout, pos)
        if ink is None:
            return
        start = stdout.rfind(b"\n", pos, ink.start()) + 1 or pos
        line, pos = _line_at(stdout, start)
        if not opens_fence(line):
            yield line
            continue
        header = _header(line)
        name, media_type = header if isinstance(header, tuple) else ("", "")
        payload, ending, pos = _read_payload(stdout, pos)
        artifacts.append(_settle(name, media_type, header, ending, payload))


def extract_artifacts(stdout: bytes) -> Extraction:
    """Split ``stdout`` into ordinary lines and fenced artifacts (see the module docstring)."""
    artifacts: list[Artifact] = []
    lines = tuple(scan(stdout, artifacts))
    return Extraction(lines, tuple(artifacts))


def _settle(
    name: str, media_type: str, header: tuple[str, str] | str, ending: str, payload: _Payload
) -> Artifact:
    size = payload.size
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
    data = b"".join(payload.chunks)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    return Artifact(name, media_type, payload=data, size_bytes=len(data), digest=digest)
