"""A ReportExport over HTTPS (specs/certify.md §2.9): the receiver's certificate verified
against the policy's ``caBundle`` (a private CA), and refused — retried, never sent in the
clear — when nothing it trusts signed it. The certificate is a self-signed one made by openssl
for 127.0.0.1 (tests/sinks/receiver.py's self_signed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.operator.certify.conftest import CertifyAPI, JobClock
from tests.operator.certify.report_export_harness import (
    Exports,
    finished_certification,
    policy,
    token_secret,
)
from tests.sinks.receiver import Receiver, self_signed


@pytest.fixture
def tls(tmp_path: Path) -> Iterator[tuple[Receiver, str]]:
    cert, key = self_signed(tmp_path)
    r = Receiver().start(tls=(cert, key))
    try:
        yield r, cert.read_text()
    finally:
        r.stop()


def _export(api: CertifyAPI, receiver: Receiver, ca_bundle: str | None) -> tuple[Exports, str]:
    token_secret(api)
    ex = Exports(api, JobClock(), receiver, allow_plain_http=False)
    finished_certification(api, "cert-a", ex.clock.now())
    made = policy(api, receiver.url)
    if ca_bundle is not None:
        got = api.http.patch(
            api.path("reportexportpolicies", made["metadata"]["name"]),
            json={"spec": {"webhook": {"caBundle": ca_bundle}}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert got.status_code == 200, got.text
    [export] = ex.register()
    return ex, export["metadata"]["name"]


def test_an_https_receiver_signed_by_the_ca_bundle_gets_the_report(
    certify_api: CertifyAPI, tls: tuple[Receiver, str]
) -> None:
    receiver, pem = tls
    assert receiver.url.startswith("https://")
    ex, name = _export(certify_api, receiver, pem)
    ex.drive(name)
    status = ex.status(name)
    assert (status["phase"], status["lastHTTPStatus"]) == ("Succeeded", 200)
    [seen] = receiver.requests
    assert seen.headers["Idempotency-Key"] == status["reportID"]


def test_an_https_receiver_nothing_trusted_signed_is_never_sent_the_report(
    certify_api: CertifyAPI, tls: tuple[Receiver, str]
) -> None:
    receiver, _ = tls
    ex, name = _export(certify_api, receiver, None)
    assert ex.drive(name) == 10.0  # a TLS refusal may be fixed on the receiver's side: retried
    status = ex.status(name)
    assert (status["phase"], status["reason"]) == ("Pending", "AttemptFailed")
    assert "CERTIFICATE_VERIFY_FAILED" in status["message"]
    assert receiver.requests == []


def test_a_ca_bundle_that_is_no_certificate_fails_the_export(
    certify_api: CertifyAPI, tls: tuple[Receiver, str]
) -> None:
    receiver, _ = tls
    broken = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n"
    ex, name = _export(certify_api, receiver, broken)
    ex.drive(name)
    status = ex.status(name)
    assert (status["phase"], status["reason"]) == ("Failed", "Refused")
    assert "webhook.caBundle cannot be used" in status["message"]
    assert receiver.requests == []
