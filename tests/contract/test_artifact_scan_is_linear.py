"""The artifact scanner skips blank runs in bulk and still means what it always meant.

The scanner used to split the whole output into a list of lines and walk it in Python; 100 MB
of blank lines took 27 s and gigabytes. It now finds the next non-blank byte and the next fence
candidate with C searches. The reference below is the line-by-line scanner it replaced, kept as
the oracle: on any output both find the same artifacts and the same non-blank lines.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glimmer.contract import artifacts
from glimmer.contract.artifacts import (
    BEGIN,
    END,
    MAX_PAYLOAD_BYTES,
    _header,
    extract_artifacts,
    opens_fence,
)
from glimmer.contract.vocab import Artifact


def _reference_extract(stdout: bytes) -> tuple[list[bytes], list[Artifact]]:
    raw = stdout.split(b"\n")
    if raw[-1] == b"":
        raw.pop()

    def strip_cr(line: bytes) -> bytes:
        return line[:-1] if line.endswith(b"\r") else line

    lines: list[bytes] = []
    artifacts: list[Artifact] = []
    i = 0
    while i < len(raw):
        line = strip_cr(raw[i])
        i += 1
        if not opens_fence(line):
            lines.append(line)
            continue
        header = _header(line)
        name, media_type = header if isinstance(header, tuple) else ("", "")
        payload: list[bytes] = []
        size, ending = 0, "unterminated"
        while i < len(raw):
            inner = strip_cr(raw[i])
            if inner == END:
                i, ending = i + 1, "closed"
                break
            if opens_fence(inner):
                ending = "nested"
                break
            size += len(inner) + 1
            if size <= MAX_PAYLOAD_BYTES:
                payload.append(inner)
            i += 1
        if isinstance(header, str):
            artifacts.append(Artifact(name, media_type, size_bytes=size, dropped=header))
        elif ending != "closed" or size > MAX_PAYLOAD_BYTES:
            artifacts.append(Artifact(name, media_type, size_bytes=size, dropped=ending))
        else:
            data = b"".join(p + b"\n" for p in payload)
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            artifacts.append(
                Artifact(name, media_type, payload=data, size_bytes=len(data), digest=digest)
            )
    return [ln for ln in lines if ln.strip(b" \t\n\r\f\v")], artifacts


PIECES = st.sampled_from(
    [
        BEGIN + b" a.txt text/plain-----", BEGIN + b"-----", BEGIN + b"S x y-----", END,
        END + b" ", b"\n", b"\r", b"\r\n", b"\n\n\n", b"  ", b"\t", b"a=1", b"x", b"\xff",
        b"\xc3\xa9", b"-----", b"\x0b", b"\x1c",
    ]
)  # fmt: skip
OUTPUTS = st.lists(PIECES | st.binary(max_size=6), max_size=30).map(b"".join)


def _shape(a: Artifact) -> tuple[object, ...]:
    # The reference words the refusals differently; what matters is that both refuse.
    return (a.name, a.media_type, a.payload, a.size_bytes, a.digest, bool(a.dropped))


@settings(max_examples=600)
@given(out=OUTPUTS)
def test_the_bulk_scanner_finds_what_the_line_by_line_scanner_found(out: bytes) -> None:
    want_lines, want_artifacts = _reference_extract(out)
    got = extract_artifacts(out)
    assert list(got.lines) == want_lines
    assert [_shape(a) for a in got.artifacts] == [_shape(a) for a in want_artifacts]


def test_blank_lines_never_reach_the_metric_scanner() -> None:
    out = b"\n" * 1000 + b"  \r\n\t\n" + b"a=1\n" + b"\r\n" * 1000
    assert extract_artifacts(out).lines == (b"a=1",)


def test_an_artifact_header_over_its_bound_is_refused_not_stored() -> None:
    out = BEGIN + b" " + b"n" * 4000 + b" text/plain-----\npayload\n" + END + b"\n"
    (art,) = extract_artifacts(out).artifacts
    assert art.name == "" and "over 512" in art.dropped
    assert len(art.dropped) < 300


_LINE_BYTES = st.sampled_from([b"a", b"=", b"1", b" ", b"\t", b"\r", b"\x0b", b"\x0c", b"\xff"])


@given(st.lists(st.lists(_LINE_BYTES, max_size=8).map(b"".join), max_size=12))
def test_a_small_output_with_no_fence_yields_the_lines_the_walk_yields(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    quick = list(artifacts.scan(data, []))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(artifacts, "_SMALL_OUTPUT", -1)  # every output takes the walk
        walked = list(artifacts.scan(data, []))
    assert quick == walked
