"""A real HTTP receiver on 127.0.0.1 for webhook tests: it answers each request by a script
(refuse, delay, fail, reject, accept), dedupes on Idempotency-Key the way a receiver must, and
counts everything it saw."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DELAY_SECONDS = 1.0  # a delayed answer; clients in tests time out well before it


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made by openssl in ``folder``, for
    :meth:`Receiver.start`'s ``tls``."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "openssl makes the tests' self-signed certificate"
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@dataclass
class Seen:
    headers: dict[str, str]
    body: bytes

    @property
    def key(self) -> str:
        return self.headers.get("Idempotency-Key", "")

    def envelope(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.body)
        return value


@dataclass
class Receiver:
    """``script`` answers requests in order ("refuse", "delay", "500", "400", "408", "429",
    "ok"); once it is spent every request is accepted."""

    script: list[str] = field(default_factory=list)
    requests: list[Seen] = field(default_factory=list)
    stored: dict[str, Seen] = field(default_factory=dict)
    posts: Counter[str] = field(default_factory=Counter)
    url: str = ""
    _server: ThreadingHTTPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _release: threading.Event = field(default_factory=threading.Event)

    def next_answer(self) -> str:
        with self._lock:
            return self.script.pop(0) if self.script else "ok"

    def record(self, seen: Seen, store: bool) -> None:
        with self._lock:
            self.requests.append(seen)
            self.posts[seen.key] += 1
            if store and seen.key not in self.stored:
                self.stored[seen.key] = seen

    def start(self, tls: tuple[Path, Path] | None = None) -> Receiver:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            server.socket = context.wrap_socket(server.socket, server_side=True)
            scheme = "https"
        self._server = server
        self.url = f"{scheme}://127.0.0.1:{server.server_address[1]}/hook"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            seen = Seen({k: v for k, v in self.headers.items()}, body)
            answer = receiver.next_answer()
            if answer == "refuse":
                receiver.record(seen, store=False)
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)  # no answer at all
                return
            if answer == "delay":
                # Processed, but answered after the client gave up: the retry is a duplicate.
                receiver.record(seen, store=True)
                receiver._release.wait(DELAY_SECONDS)
                self._answer(200, b"late")
                return
            if answer == "ok":
                duplicate = seen.key in receiver.stored
                receiver.record(seen, store=True)
                self._answer(200, b"duplicate" if duplicate else b"stored")
                return
            receiver.record(seen, store=False)
            status = int(answer)
            self._answer(status, ("x" * 5000 if status == 400 else f"status {status}").encode())

        def _answer(self, status: int, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the client went away (a delayed answer)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler
