"""One attempt at a ReportExport's webhook, and the wait before the next, over the burn-in
webhook sink's transport and retry pieces (no second HTTP client).

The attempt is :class:`~glimmer.sinks.webhook.WebhookSink`'s POST: TLS verified (against
``webhook.caBundle`` when given, else the system store; a bundle that cannot be loaded is a
permanent failure), redirects
not followed, the whole attempt under one deadline (``webhook.timeout``), at most 2 KiB of a
refusal read, credentials in the URL redacted, the bearer token read from its Secret at each
attempt (:func:`~glimmer.operator.sinks.secret_token`) and never kept or logged. The
``Idempotency-Key`` header is the export's ``reportID``. Its rules decide what is final:
2xx accepted; 408, 429, 5xx and transport failures retryable; any other answer (4xx, 3xx)
and a token that cannot be read (no Secret, no key, empty) permanent.

The wait is the sink's :class:`~glimmer.sinks.sender.RetryPolicy` arithmetic with
``initialBackoff`` as its base and ``maxBackoff`` as its cap, no jitter: the wait before the
n-th attempt of a cycle is ``initialBackoff·2^(n−2)``, at most ``maxBackoff``.
"""

from __future__ import annotations

import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from lightkube import Client

from glimmer.api.certify.report_export import ExportRetry, ExportWebhook
from glimmer.api.fleet_sched import parse_duration
from glimmer.errors import InputError
from glimmer.operator.sinks import secret_token
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.sender import RetryPolicy
from glimmer.sinks.webhook import TokenSource, WebhookSink


@dataclass(frozen=True)
class Answer:
    """What one attempt came to."""

    accepted: bool
    retryable: bool
    status: int | None  # the HTTP status, None when no answer came
    message: str


def post(
    client: Client,
    namespace: str,
    webhook: ExportWebhook,
    body: bytes,
    report_id: str,
    ident: str,
) -> Answer:
    """POST ``body`` to ``webhook`` once (the token from ``namespace``'s Secret)."""
    ref = webhook.bearer_token_secret_ref
    token = None if ref is None else secret_token(client, namespace, ref, "bearerTokenSecretRef")
    try:
        sink = _sink(webhook, ident, token)
    except (ssl.SSLError, OSError, InputError) as e:
        return Answer(False, False, None, f"webhook.caBundle cannot be used: {e}")
    try:
        sink.send({"deliveryId": report_id}, body, parse_duration(webhook.timeout))
    except DeliveryError as e:
        return Answer(False, not e.permanent, sink.last_status, str(e))
    finally:
        sink.close()
    return Answer(True, False, sink.last_status, f"the receiver answered HTTP {sink.last_status}")


def _sink(webhook: ExportWebhook, ident: str, token: TokenSource | None) -> WebhookSink:
    """The sink of one attempt; a ``caBundle`` goes through a file the TLS context loads while
    the sink is made (the sink reads a bundle from a path), gone right after."""
    if not webhook.ca_bundle:
        return WebhookSink(webhook.url, name=ident, token=token)
    with tempfile.TemporaryDirectory(prefix="glimmer-export-ca-") as folder:
        bundle = Path(folder) / "ca.pem"
        bundle.write_text(webhook.ca_bundle)
        return WebhookSink(webhook.url, name=ident, token=token, ca_bundle=bundle)


def backoff(retry: ExportRetry, attempt: int) -> float:
    """Seconds to wait before attempt ``attempt`` (1-based) of a cycle."""
    policy = RetryPolicy(
        attempts=retry.max_attempts,
        base=parse_duration(retry.initial_backoff),
        cap=parse_duration(retry.max_backoff),
    )
    return policy.wait_before(attempt)
