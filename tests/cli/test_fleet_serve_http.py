"""``glimmer fleet serve`` over HTTP/1.1: a streamed, optionally gzipped /metrics body.

Each test runs the real server on 127.0.0.1 (an ephemeral port) in a thread of this process,
with simulated time held still so that two scrapes render the same exposition.
"""

from __future__ import annotations

import gzip
import http.client
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator

import pytest

from glimmer.backends.common.registry import SIM
from glimmer.cli.fleet_live import metrics_server
from glimmer.cli.http_body import MIN_CHUNK, accepts_gzip
from glimmer.fleet.load import load_topology
from glimmer.sim.clock import EPOCH

FLEET = "ai-factory-fixture"
EXPECTED_LINTS = (
    "label names should be written in 'snake_case' not 'camelCase'",
    'counter metrics should have "_total" suffix',
)


class StillClock:
    def now(self) -> float:
        return EPOCH + 3600


@pytest.fixture(scope="module")
def exposition() -> str:
    return "".join(SIM.twin(load_topology(FLEET), noise=False).exposition_chunks(EPOCH + 3600))


@pytest.fixture
def port() -> Iterator[int]:
    server = metrics_server(
        SIM.twin(load_topology(FLEET), noise=False), StillClock(), "127.0.0.1", 0
    )
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


def _get(
    conn: http.client.HTTPConnection, path: str = "/metrics", **headers: str
) -> tuple[http.client.HTTPResponse, bytes]:
    conn.request("GET", path, headers={k.replace("_", "-"): v for k, v in headers.items()})
    resp = conn.getresponse()
    return resp, resp.read()


def test_plain_and_gzip_bodies_decode_to_the_same_exposition(port: int, exposition: str) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    plain, plain_body = _get(conn, Accept_Encoding="identity")
    packed, packed_body = _get(conn, Accept_Encoding="gzip")
    conn.close()
    assert plain.getheader("Content-Encoding") is None
    assert packed.getheader("Content-Encoding") == "gzip"
    assert plain_body.decode() == exposition
    assert gzip.decompress(packed_body).decode() == exposition
    assert len(packed_body) < len(plain_body) // 4


def test_every_metrics_answer_varies_on_accept_encoding(port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for encoding in ("identity", "gzip"):
        resp, _ = _get(conn, Accept_Encoding=encoding)
        assert resp.getheader("Vary") == "Accept-Encoding"
        assert resp.getheader("Content-Type", "").startswith("text/plain; version=0.0.4")
    conn.close()


def test_a_keep_alive_client_makes_two_requests_on_one_connection(port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    first, first_body = _get(conn)
    sock = conn.sock
    second, second_body = _get(conn, Accept_Encoding="gzip")
    missing, _ = _get(conn, "/nope")
    assert conn.sock is sock  # http.client reconnects silently when a server closes
    conn.close()
    assert (first.version, first.status, second.status, missing.status) == (11, 200, 200, 404)
    assert first.getheader("Connection") != "close"
    assert first_body == gzip.decompress(second_body)


def test_the_body_is_sent_in_chunks_as_it_is_produced(port: int, exposition: str) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    resp, body = _get(conn)
    conn.close()
    assert resp.getheader("Transfer-Encoding") == "chunked"
    assert resp.getheader("Content-Length") is None
    assert len(body) == len(exposition.encode()) > MIN_CHUNK  # more than one chunk


def _raw_exchange(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        received = []
        while block := sock.recv(1 << 16):  # an HTTP/1.0 answer ends when the server closes
            received.append(block)
    return b"".join(received)


def test_an_http_1_0_client_gets_the_body_unchunked_then_the_close(
    port: int, exposition: str
) -> None:
    answer = _raw_exchange(port, b"GET /metrics HTTP/1.0\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding" not in head and b"Connection: close" in head
    assert body.decode() == exposition


def test_the_not_found_answer_says_its_length(port: int) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    resp, body = _get(conn, "/nope")
    conn.close()
    assert resp.status == 404
    assert resp.getheader("Content-Length") == str(len(body))


def test_promtool_accepts_the_gzipped_served_exposition(port: int) -> None:
    promtool = shutil.which("promtool")
    assert promtool is not None, "promtool is not on PATH; run tests/tools/ensure_promtool.sh"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    _, body = _get(conn, Accept_Encoding="gzip")
    conn.close()
    done = subprocess.run(
        [promtool, "check", "metrics"], input=gzip.decompress(body), capture_output=True, timeout=60
    )
    said = (done.stdout + done.stderr).decode()
    assert done.returncode in (0, 3), said
    assert "error while linting" not in said
    # dcgm-exporter's own names break two of promtool's style lints (as in tests/sim); any
    # other finding is a failure.
    findings = {line.partition(" ")[2] for line in said.splitlines() if line.strip()}
    assert findings <= set(EXPECTED_LINTS)


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        (None, False),
        ("", False),
        ("gzip", True),
        ("GZIP", True),
        ("x-gzip", True),
        ("gzip, deflate, br", True),
        ("deflate, gzip;q=0.5", True),
        ("gzip;q=0", False),
        ("gzip; q=0.0, deflate", False),
        ("*", True),
        ("*;q=0", False),
        ("*, gzip;q=0", False),
        ("identity", False),
        ("br", False),
        ("gzip;q=nonsense", False),
    ],
)
def test_gzip_is_sent_only_when_accept_encoding_allows_it(
    header: str | None, allowed: bool
) -> None:
    assert accepts_gzip(header) is allowed
