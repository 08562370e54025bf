"""A webhook attempt is bounded however the receiver answers: a total deadline on the attempt
(a trickled answer is cut off at it) and a bound on what is read of an answer's body.

The receiver here is a real socket server on 127.0.0.1 that answers by hand, so it can trickle
an answer a byte at a time or offer far more body than anyone should read, and record how much
of it the client took before hanging up.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from sink_doubles import an_envelope

from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.webhook import MAX_QUOTED_BODY, WebhookSink

DEADLINE = 1.0  # the attempt's deadline in these tests (seconds)
TRICKLE_EVERY = 0.05  # seconds between two trickled bytes: each well inside any read timeout
TRICKLE_BYTES = 120  # 6 s of trickle: several deadlines long
HUGE_BODY = 64 * 1024 * 1024  # offered to the client; it must read a sliver of it
CHUNK = 64 * 1024


@dataclass
class HandServer:
    """Answers one POST per connection with ``head`` and then ``body_bytes`` of body, either
    trickled (``trickle``: one byte each :data:`TRICKLE_EVERY`) or as fast as it is taken."""

    head: bytes
    body_bytes: int
    trickle: bool = False
    trickle_head: bool = False
    sent: list[int] = field(default_factory=list)  # body bytes sent, per connection
    hung_up: list[bool] = field(default_factory=list)  # the client left before the end
    url: str = ""
    _sock: socket.socket | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _answers: list[threading.Thread] = field(default_factory=list)

    def start(self) -> HandServer:
        sock = socket.create_server(("127.0.0.1", 0))
        sock.settimeout(0.2)
        self._sock = sock
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
        threading.Thread(target=self._serve, daemon=True).start()
        return self

    def finish(self) -> None:
        """Wait (bounded) until every answer under way has ended: sent whole, or stopped by
        the client hanging up."""
        for answer in self._answers:
            answer.join(timeout=15)

    def stop(self) -> None:
        self._stop.set()
        if self._sock is not None:
            self._sock.close()

    def _serve(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            answer = threading.Thread(target=self._answer, args=(conn,), daemon=True)
            self._answers.append(answer)
            answer.start()

    def _answer(self, conn: socket.socket) -> None:
        sent, left = 0, False
        with conn:
            conn.settimeout(10)
            try:
                _read_request(conn)
                if self.trickle_head:
                    for byte in self.head:
                        time.sleep(TRICKLE_EVERY)
                        conn.sendall(bytes([byte]))
                else:
                    conn.sendall(self.head)
                while sent < self.body_bytes:
                    if self.trickle:
                        time.sleep(TRICKLE_EVERY)
                        conn.sendall(b"x")
                        sent += 1
                    else:
                        n = min(CHUNK, self.body_bytes - sent)
                        conn.sendall(b"x" * n)
                        sent += n
            except OSError:
                left = True  # reset or broken pipe: the client hung up
        self.sent.append(sent)
        self.hung_up.append(left)


def _read_request(conn: socket.socket) -> None:
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        rest += conn.recv(65536)


def _head(status: str, length: int) -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Length: {length}\r\n\r\n".encode()


@pytest.fixture
def servers() -> Iterator[list[HandServer]]:
    started: list[HandServer] = []
    yield started
    for server in started:
        server.stop()


def _post(server: HandServer) -> DeliveryError:
    sink = WebhookSink(server.url)
    try:
        with pytest.raises(DeliveryError) as caught:
            sink.send(an_envelope(), b"{}", DEADLINE)
    finally:
        sink.close()
    return caught.value


def test_a_trickled_error_body_is_cut_off_at_the_attempts_deadline(
    servers: list[HandServer],
) -> None:
    server = HandServer(_head("500 Oops", TRICKLE_BYTES), TRICKLE_BYTES, trickle=True).start()
    servers.append(server)
    error = _post(server)
    assert "ReadTimeout" in str(error) and not error.permanent  # a timeout: retried later
    server.finish()
    assert server.hung_up == [True]
    assert server.sent[0] < TRICKLE_BYTES


def test_a_trickled_head_is_cut_off_at_the_attempts_deadline(
    servers: list[HandServer],
) -> None:
    # Every byte of the head a wait apart (~3 s in all): no single read waits long.
    head = b"HTTP/1.1 200 OK\r\nX-Slow: " + b"y" * 20 + b"\r\nContent-Length: 0\r\n\r\n"
    server = HandServer(head, 0, trickle_head=True).start()
    servers.append(server)
    error = _post(server)
    assert "ReadTimeout" in str(error) and not error.permanent
    server.finish()
    assert server.hung_up == [True]


def test_only_the_quoted_part_of_a_huge_error_body_is_read(servers: list[HandServer]) -> None:
    server = HandServer(_head("400 Bad Request", HUGE_BODY), HUGE_BODY).start()
    servers.append(server)
    error = _post(server)
    assert error.permanent and "HTTP 400: " + "x" * MAX_QUOTED_BODY + " …" in str(error)
    server.finish()
    # What the server got out before the client hung up is what the sockets' buffers hold,
    # not the 64 MiB it offered.
    assert server.hung_up == [True] and server.sent[0] < HUGE_BODY // 4


def test_the_body_of_an_acceptance_is_not_read(servers: list[HandServer]) -> None:
    server = HandServer(_head("200 OK", HUGE_BODY), HUGE_BODY).start()
    servers.append(server)
    sink = WebhookSink(server.url)
    try:
        sink.send(an_envelope(), b"{}", DEADLINE)  # accepted
    finally:
        sink.close()
    server.finish()
    assert server.hung_up == [True] and server.sent[0] < HUGE_BODY // 4
