"""The webhook sink (specs/burnin.md §5.5): POST the envelope as JSON.

Headers: ``Content-Type: application/json``, ``Idempotency-Key: <deliveryId>`` (receivers dedupe
on it), ``Authorization: Bearer <token>`` when a token is configured (read at each send, never
kept), and ``X-Glimmer-Signature: sha256=<hex>`` when a signing secret is configured.

Answers: 2xx delivered; 408 and 429 retryable (the receiver asks to be tried later); any other
4xx permanent (the receiver refuses this envelope; the same bytes would be refused again), and
so is a 3xx (redirects are not followed); 5xx and transport failures (refused, reset, timed
out) retryable. Up to 2048 bytes of the answer's
body are quoted in the error, so a receiver's reason reaches the operator without flooding it,
and no more than that is ever read: an answer's body is streamed and the rest left unread, so a
receiver answering with hundreds of megabytes costs a few kilobytes. The ``timeout`` of a send is
a total deadline on the attempt (connect, send, answer, body), not a per-read timeout: a
receiver that trickles its answer is cut off at it (:mod:`glimmer.sinks.deadline`).

Credentials a URL may carry (``user:password@``, ``?token=`` …) are refused at load where a
secret reference can carry them instead (:mod:`glimmer.api.sink`); whatever remains, here and for
Python callers, is shown as *** in this sink's name (the outbox's key), its errors and its log.

TLS: verification is always on, against the system store or a given CA bundle; it is off only
when ``insecureSkipVerify`` says so, and then a warning is logged once per sink.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable
from pathlib import Path

import httpx

from glimmer.api.budget import check_size
from glimmer.api.sink import redact
from glimmer.sinks.deadline import Deadline, DeadlineTransport
from glimmer.sinks.envelope import Envelope
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.signing import SIGNATURE_HEADER, SigningSecret, sign

log = logging.getLogger(__name__)

MAX_QUOTED_BODY = 2048
RETRYABLE_4XX = frozenset({408, 429})

TokenSource = Callable[[], str | None]


def quote_body(content: bytes) -> str:
    """At most :data:`MAX_QUOTED_BODY` bytes of a response body, decoded leniently."""
    clipped = content[:MAX_QUOTED_BODY]
    text = clipped.decode("utf-8", errors="replace").strip()
    return text + (" …" if len(content) > MAX_QUOTED_BODY else "")


def _head(response: httpx.Response) -> bytes:
    """The first bytes of ``response``'s body, enough to quote and to tell it was cut (one
    more than quoted); the rest is never read."""
    got = bytearray()
    for chunk in response.iter_raw(chunk_size=MAX_QUOTED_BODY + 1):
        got += chunk
        if len(got) > MAX_QUOTED_BODY:
            break
    return bytes(got[: MAX_QUOTED_BODY + 1])


def _verify(ca_bundle: Path | None, insecure: bool, url: str) -> ssl.SSLContext | bool:
    if insecure:
        log.warning("TLS verification is OFF for webhook %s (insecureSkipVerify)", redact(url))
        return False
    if ca_bundle is not None:
        check_size(ca_bundle, "ca-bundle")  # refused before the TLS layer reads it whole
        return ssl.create_default_context(cafile=str(ca_bundle))
    return True


class WebhookSink:
    """POST to ``url``. ``token`` yields the bearer token (or None); a failure to read it is a
    permanent :class:`DeliveryError` raised by the source itself."""

    def __init__(
        self,
        url: str,
        *,
        name: str = "",
        token: TokenSource | None = None,
        secret: SigningSecret | None = None,
        ca_bundle: Path | None = None,
        insecure_skip_verify: bool = False,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url
        self._shown = redact(url)  # what any message says the URL is
        self._ident = name or f"webhook={self._shown}"
        self._token = token
        self._secret = secret
        self._deadline = Deadline()
        # The HTTP status of the last answer (None: no answer), for a caller that records it.
        self.last_status: int | None = None
        verify = _verify(ca_bundle, insecure_skip_verify, url)
        self._client = httpx.Client(
            transport=transport or DeadlineTransport(self._deadline, verify),
            follow_redirects=False,
        )

    @property
    def ident(self) -> str:
        return self._ident

    def close(self) -> None:
        self._client.close()

    def headers(self, envelope: Envelope, body: bytes) -> dict[str, str]:
        """Every header of the POST of ``body``."""
        headers = {
            "Content-Type": "application/json",
            "Idempotency-Key": str(envelope.get("deliveryId", "")),
            # An answer is quoted as sent: a compressed one could inflate past what is read.
            "Accept-Encoding": "identity",
        }
        token = self._token() if self._token is not None else None
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if self._secret is not None:
            headers[SIGNATURE_HEADER] = sign(body, self._secret)
        return headers

    def send(self, envelope: Envelope, body: bytes, timeout: float) -> None:
        headers = self.headers(envelope, body)
        self.last_status = None
        self._deadline.at = self._deadline.clock() + max(timeout, 0.0)
        try:
            with self._client.stream(
                "POST", self.url, content=body, headers=headers, timeout=timeout
            ) as response:
                status = self.last_status = response.status_code
                if 200 <= status < 300:
                    return  # the body of an acceptance is not needed: left unread
                content = _head(response)
        except httpx.TransportError as e:
            # Refused, reset, timed out, TLS refused: the receiver may be back later.
            raise DeliveryError(f"POST {self._shown}: {type(e).__name__}: {redact(str(e))}") from e
        finally:
            self._deadline.at = None
        said = quote_body(content)
        message = f"POST {self._shown}: HTTP {status}" + (f": {said}" if said else "")
        # A redirect is not followed (the body would be re-sent somewhere unconfigured) and,
        # like a 4xx, would be answered the same way again: permanent.
        permanent = status < 500 and status not in RETRYABLE_4XX
        raise DeliveryError(message, permanent=permanent)
