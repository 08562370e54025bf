"""The webhook sink against a real HTTP server on 127.0.0.1 (specs/burnin.md §5.5): the headers,
the signature, which answers are retried, and TLS verification on by default."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from receiver import Receiver, self_signed
from sink_doubles import FakeClock, an_envelope

from glimmer.sinks.base import encode
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.sender import CLI_POLICY, RetryPolicy, Sender
from glimmer.sinks.signing import SIGNATURE_HEADER, SigningSecret, verify
from glimmer.sinks.webhook import MAX_QUOTED_BODY, WebhookSink

FAST = RetryPolicy(attempts=6, base=2.0, cap=120.0, jitter=0.25, timeout=0.3)


def send(sink: WebhookSink, clock: FakeClock, policy: RetryPolicy = FAST) -> int:
    env = an_envelope()
    body = encode(env)
    return Sender(policy, clock).send(sink.ident, lambda t: sink.send(env, body, t))


def test_posts_json_with_the_idempotency_key_and_a_verifiable_signature(
    receiver: Receiver, clock: FakeClock, tmp_path: Path
) -> None:
    (tmp_path / "secret").write_text("s3cret\n")
    secret = SigningSecret.from_file(tmp_path / "secret")
    sink = WebhookSink(receiver.url, secret=secret, token=lambda: "tok")
    assert send(sink, clock) == 1
    [seen] = receiver.requests
    env = an_envelope()
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.headers["Idempotency-Key"] == env["deliveryId"] == seen.envelope()["deliveryId"]
    assert seen.headers["Authorization"] == "Bearer tok"
    assert verify(seen.body, seen.headers[SIGNATURE_HEADER], secret)
    assert not verify(seen.body + b" ", seen.headers[SIGNATURE_HEADER], secret)
    assert not verify(seen.body, seen.headers[SIGNATURE_HEADER], SigningSecret(b"other", "x"))


def test_the_signing_secret_can_come_from_the_environment(
    receiver: Receiver, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GLIMMER_TEST_SECRET", "from-env")
    secret = SigningSecret.from_env("GLIMMER_TEST_SECRET")
    send(WebhookSink(receiver.url, secret=secret), clock)
    [seen] = receiver.requests
    assert verify(seen.body, seen.headers[SIGNATURE_HEADER], SigningSecret(b"from-env", "t"))
    assert "from-env" not in repr(secret)


def test_no_signature_header_without_a_secret(receiver: Receiver, clock: FakeClock) -> None:
    send(WebhookSink(receiver.url), clock)
    assert SIGNATURE_HEADER not in receiver.requests[0].headers
    assert "Authorization" not in receiver.requests[0].headers


def test_a_400_is_permanent_not_retried_and_its_body_is_clamped(
    receiver: Receiver, clock: FakeClock
) -> None:
    receiver.script = ["400"]
    with pytest.raises(DeliveryError) as err:
        send(WebhookSink(receiver.url), clock)
    assert err.value.permanent and len(receiver.requests) == 1 and not clock.sleeps
    quoted = str(err.value).split("HTTP 400: ", 1)[1]
    assert quoted.count("x") == MAX_QUOTED_BODY


def test_a_redirect_is_not_followed_and_not_retried(receiver: Receiver, clock: FakeClock) -> None:
    receiver.script = ["302"]
    with pytest.raises(DeliveryError) as err:
        send(WebhookSink(receiver.url), clock)
    assert err.value.permanent and len(receiver.requests) == 1 and "HTTP 302" in str(err.value)


@pytest.mark.parametrize("status", ["500", "503", "408", "429"])
def test_server_errors_and_try_later_answers_are_retried(
    receiver: Receiver, clock: FakeClock, status: str
) -> None:
    receiver.script = [status, status]
    assert send(WebhookSink(receiver.url), clock) == 3
    assert len(receiver.stored) == 1 and clock.sleeps  # backoff went through the fake clock


def test_refused_delayed_and_failed_then_accepted_arrives_once(
    receiver: Receiver, clock: FakeClock
) -> None:
    receiver.script = ["refuse", "delay", "500"]
    assert send(WebhookSink(receiver.url), clock) == 4
    key = an_envelope()["deliveryId"]
    assert list(receiver.stored) == [key]  # stored once however often it came
    assert receiver.posts[key] == 4


def test_nothing_listening_is_a_retryable_failure(clock: FakeClock) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    sink = WebhookSink(f"http://127.0.0.1:{port}/hook")
    with pytest.raises(DeliveryError) as err:
        send(sink, clock, RetryPolicy(attempts=2, base=1.0, cap=2.0, timeout=0.5))
    assert not err.value.permanent and "ConnectError" in str(err.value)
    assert "after 2 attempts" in str(err.value)


# -- TLS --------------------------------------------------------------------------------------


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[Receiver, Path]]:
    cert, key = self_signed(tmp_path)
    r = Receiver().start(tls=(cert, key))
    try:
        yield r, cert
    finally:
        r.stop()


def test_tls_is_verified_by_default_and_a_self_signed_server_is_refused(
    tls_receiver: tuple[Receiver, Path], clock: FakeClock
) -> None:
    receiver, _ = tls_receiver
    with pytest.raises(DeliveryError) as err:
        send(WebhookSink(receiver.url), clock, RetryPolicy(attempts=1, base=1, cap=1, timeout=5))
    assert "CERTIFICATE_VERIFY_FAILED" in str(err.value) or "certificate" in str(err.value)
    assert not receiver.stored


def test_a_custom_ca_bundle_verifies_the_server(
    tls_receiver: tuple[Receiver, Path], clock: FakeClock
) -> None:
    receiver, cert = tls_receiver
    send(WebhookSink(receiver.url, ca_bundle=cert), clock, CLI_POLICY)
    assert len(receiver.stored) == 1


def test_insecure_skip_verify_is_honoured_only_when_set_and_warns(
    tls_receiver: tuple[Receiver, Path], clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    receiver, _ = tls_receiver
    with caplog.at_level(logging.WARNING, logger="glimmer.sinks.webhook"):
        sink = WebhookSink(receiver.url, insecure_skip_verify=True)
    assert "TLS verification is OFF" in caplog.text
    send(sink, clock, CLI_POLICY)
    assert len(receiver.stored) == 1
