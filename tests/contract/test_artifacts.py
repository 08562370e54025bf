import hashlib

import pytest

from glimmer.contract.artifacts import (
    HEADER_CLAMP_BYTES,
    MAX_PAYLOAD_BYTES,
    extract_artifacts,
    opens_fence,
)

BEGIN = b"-----BEGIN BURNIN ARTIFACT per-device.json application/json-----"
END = b"-----END BURNIN ARTIFACT-----"


def test_accepted_artifact_has_payload_size_and_sha256_digest() -> None:
    out = b"a=1\n" + BEGIN + b'\n{"x": 1}\r\n[]\n' + END + b"\nb=2\n"
    ex = extract_artifacts(out)
    (art,) = ex.artifacts
    assert (art.name, art.media_type, art.dropped) == ("per-device.json", "application/json", "")
    assert art.payload == b'{"x": 1}\n[]\n'  # CR stripped, every line ends in \n
    assert art.size_bytes == len(art.payload)
    assert art.digest == "sha256:" + hashlib.sha256(art.payload).hexdigest()
    assert ex.lines == (b"a=1", b"b=2")


def test_empty_payload_is_accepted() -> None:
    (art,) = extract_artifacts(BEGIN + b"\n" + END + b"\n").artifacts
    assert art.payload == b"" and art.size_bytes == 0 and not art.dropped
    assert art.digest == "sha256:" + hashlib.sha256(b"").hexdigest()


@pytest.mark.parametrize(
    "line",
    [
        b"-----BEGIN BURNIN ARTIFACT a b-----",
        b"-----BEGIN BURNIN ARTIFACT\ta b-----",
        b"-----BEGIN BURNIN ARTIFACT-----",
        b"-----BEGIN BURNIN ARTIFACT   -----",
    ],
)
def test_begin_line_opens_a_fence(line: bytes) -> None:
    assert opens_fence(line)


@pytest.mark.parametrize(
    "line",
    [
        b"-----BEGIN BURNIN ARTIFACTS a b-----",
        b" -----BEGIN BURNIN ARTIFACT a b-----",
        b"-----BEGIN BURNIN ARTIFACT a b----",
        b"-----BEGIN BURNIN ARTIFACT a b----- ",
        b"-----BEGIN BURNIN ARTIFACT",
        b"-----begin burnin artifact a b-----",
    ],
)
def test_near_miss_lines_do_not_open_a_fence(line: bytes) -> None:
    assert not opens_fence(line)
    ex = extract_artifacts(line + b"\n")
    assert ex.artifacts == ()
    assert ex.lines == (line,)


def test_begin_with_crlf_still_opens() -> None:
    ex = extract_artifacts(BEGIN + b"\r\nx\r\n" + END + b"\r\n")
    assert ex.artifacts[0].payload == b"x\n"


@pytest.mark.parametrize("header", [b"", b" onlyname", b" a b c"])
def test_wrong_header_field_count_is_refused_but_payload_still_consumed(header: bytes) -> None:
    out = b"-----BEGIN BURNIN ARTIFACT" + header + b"-----\nsecret=1\n" + END + b"\nafter=2\n"
    ex = extract_artifacts(out)
    (art,) = ex.artifacts
    assert art.dropped and "header" in art.dropped
    assert art.payload == b"" and art.digest == ""
    assert ex.lines == (b"after=2",)


def test_refused_header_is_clamped_to_120_bytes_without_splitting_a_rune() -> None:
    header = " ".join(["é" * 100, "b", "c"]).encode()  # 2-byte runes straddle byte 120
    (art,) = extract_artifacts(b"-----BEGIN BURNIN ARTIFACT " + header + b"-----\n").artifacts
    shown = art.dropped.split("got ", 1)[1]
    assert "é" * (HEADER_CLAMP_BYTES // 2) in shown
    assert "é" * (HEADER_CLAMP_BYTES // 2 + 1) not in shown
    assert "\ufffd" not in shown


def test_nested_begin_refuses_the_outer_and_restarts_at_the_nested_line() -> None:
    inner = b"-----BEGIN BURNIN ARTIFACT inner.txt text/plain-----"
    out = BEGIN + b"\nouter=1\n" + inner + b"\nin\n" + END + b"\ntail=1\n"
    ex = extract_artifacts(out)
    outer, nested = ex.artifacts
    assert outer.name == "per-device.json" and "BEGIN" in outer.dropped
    assert (nested.name, nested.payload, nested.dropped) == ("inner.txt", b"in\n", "")
    assert ex.lines == (b"tail=1",)  # the outer payload never reaches the metric scanner


def test_unterminated_fence_is_refused_and_consumes_the_rest() -> None:
    ex = extract_artifacts(b"a=1\n" + BEGIN + b"\nb=2\nc=3\n")
    (art,) = ex.artifacts
    assert "END" in art.dropped
    assert ex.lines == (b"a=1",)


def test_payload_at_the_cap_is_accepted() -> None:
    line = b"x" * (MAX_PAYLOAD_BYTES - 1)  # plus its newline: exactly the cap
    (art,) = extract_artifacts(BEGIN + b"\n" + line + b"\n" + END).artifacts
    assert not art.dropped and art.size_bytes == MAX_PAYLOAD_BYTES


def test_payload_over_the_cap_is_refused_with_its_true_size() -> None:
    lines = [b"y" * 1000] * 300
    out = BEGIN + b"\n" + b"\n".join(lines) + b"\n" + END + b"\nafter=1\n"
    ex = extract_artifacts(out)
    (art,) = ex.artifacts
    assert art.size_bytes == 300 * 1001
    assert str(300 * 1001) in art.dropped and str(MAX_PAYLOAD_BYTES) in art.dropped
    assert art.payload == b""
    assert ex.lines == (b"after=1",)


def test_non_utf8_payload_is_kept_byte_for_byte() -> None:
    (art,) = extract_artifacts(BEGIN + b"\n\xff\xfe\x00\n" + END).artifacts
    assert art.payload == b"\xff\xfe\x00\n"


def test_stray_end_line_is_an_ordinary_line() -> None:
    assert extract_artifacts(END + b"\n").lines == (END,)
