"""A total deadline for one HTTP attempt, however slowly the receiver answers.

httpx's timeouts bound each socket operation, not the request: a receiver that trickles its
answer a byte at a time, each byte within the read timeout, holds an attempt for as long as it
likes (one held an attempt 30 s "timeout" for 90 s). The transport here gives every connect,
read, write and TLS handshake of an attempt only what is left of the attempt's deadline, so the
attempt as a whole ends by it, headers and body alike, on a new or a reused connection.
"""

from __future__ import annotations

import ssl
import time
import typing
from collections.abc import Callable, Iterable

import httpcore
import httpx

# A connection kept for reuse between deliveries, as httpx keeps them by default.
_KEEPALIVE = httpx.Limits()


class Deadline:
    """The end of the attempt in progress, on the monotonic clock (None: no attempt)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.at: float | None = None

    def left(self, timeout: float | None) -> float | None:
        """The smaller of ``timeout`` and what is left of the deadline (never below 0)."""
        if self.at is None:
            return timeout
        left = max(self.at - self.clock(), 0.0)
        return left if timeout is None else min(timeout, left)

    def expired(self) -> bool:
        return self.at is not None and self.clock() >= self.at


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._deadline.expired():
            raise httpcore.ReadTimeout("the attempt's deadline passed")
        return self._inner.read(max_bytes, self._deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self._deadline.expired():
            raise httpcore.WriteTimeout("the attempt's deadline passed")
        self._inner.write(buffer, self._deadline.left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        if self._deadline.expired():
            raise httpcore.ConnectTimeout("the attempt's deadline passed")
        inner = self._inner.start_tls(ssl_context, server_hostname, self._deadline.left(timeout))
        return _Stream(inner, self._deadline)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, deadline: Deadline) -> None:
        self._inner = httpcore.SyncBackend()
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        if self._deadline.expired():
            raise httpcore.ConnectTimeout("the attempt's deadline passed")
        stream = self._inner.connect_tcp(
            host, port, self._deadline.left(timeout), local_address, socket_options
        )
        return _Stream(stream, self._deadline)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(path, self._deadline.left(timeout), socket_options)
        return _Stream(stream, self._deadline)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport over sockets whose every operation respects ``deadline``."""

    def __init__(self, deadline: Deadline, verify: ssl.SSLContext | bool = True) -> None:
        super().__init__(verify=verify)
        self._pool.close()  # holds no connection yet
        # The pool httpx built is replaced by one with the same TLS context and limits over the
        # deadline's backend; httpx offers no other way to give its transport a backend.
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify),
            max_connections=_KEEPALIVE.max_connections,
            max_keepalive_connections=_KEEPALIVE.max_keepalive_connections,
            keepalive_expiry=_KEEPALIVE.keepalive_expiry,
            network_backend=_Backend(deadline),
        )
