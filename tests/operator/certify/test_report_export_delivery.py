"""The ReportExport controller's delivery (specs/certify.md §2.9) against the API stand-in and a
real HTTP receiver on loopback: the snapshot first, then the POST of exactly its bytes with the
idempotency key and the bearer token; the answers that end a delivery and those that are
retried with backoff, time moved by the test's clock."""

from __future__ import annotations

import json
import logging

import pytest

from tests.operator.certify.report_export_harness import (
    CLUSTER_ID,
    TOKEN,
    Exports,
    exports,
    one_export,
    receiver,
    report_doc,
    sha256,
)

__all__ = ["exports", "receiver"]  # the fixtures these tests use


def test_a_report_is_delivered_once_with_the_snapshot_bytes_key_and_token(
    exports: Exports, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    name = one_export(exports)
    cert = exports.api.get("certifications", "cert-a")
    assert cert is not None
    uid = cert["metadata"]["uid"]

    # Delivered; the next reconcile is due when its retention (168h) ends.
    assert exports.drive(name) == 168 * 3600
    status = exports.status(name)
    assert status["phase"] == "Succeeded"
    assert status["reason"] == "Delivered"
    assert (status["attempts"], status["cycleAttempts"], status["lastHTTPStatus"]) == (1, 1, 200)
    assert status["reportID"] == uid
    assert status["result"] == "Succeeded"
    assert {c["type"]: c["status"] for c in status["conditions"]} == {
        "SnapshotPersisted": "True",
        "Accepted": "True",
    }
    # The one POST carries exactly the persisted snapshot, which holds the report.
    [seen] = exports.receiver.requests
    snapshot = exports.api.configmap(status["snapshotRef"]["name"])
    assert snapshot is not None
    persisted = snapshot["data"][status["snapshotRef"]["key"]].encode()
    assert seen.body == persisted
    assert sha256(seen.body) == status["sha256"]
    assert len(seen.body) == status["payloadBytes"]
    assert (
        snapshot["metadata"]["ownerReferences"][0]["uid"] == exports.export(name)["metadata"]["uid"]
    )
    doc = json.loads(seen.body)
    assert doc["report"] == report_doc("cert-a")
    assert (doc["reportID"], doc["clusterID"], doc["result"]) == (uid, CLUSTER_ID, "Succeeded")
    assert doc["certification"] == {"namespace": "default", "name": "cert-a", "uid": uid}
    assert seen.headers["Idempotency-Key"] == uid
    assert seen.headers["Authorization"] == f"Bearer {TOKEN}"
    # The token reaches the receiver and nothing else: no log line, no status, no Event.
    assert TOKEN not in caplog.text
    assert TOKEN not in json.dumps(exports.export(name))
    assert TOKEN not in json.dumps(exports.api.events())
    # A finished export is not sent again by later reconciles.
    exports.drive(name)
    assert len(exports.receiver.requests) == 1


def test_a_5xx_is_retried_after_the_backoff_the_status_schedules(exports: Exports) -> None:
    exports.receiver.script = ["500", "503"]
    name = one_export(exports, initialBackoff="10s", maxBackoff="15m")

    assert exports.drive(name) == 10.0
    status = exports.status(name)
    assert (status["phase"], status["reason"], status["lastHTTPStatus"]) == (
        "Pending",
        "AttemptFailed",
        500,
    )
    first = status["lastAttemptTime"]
    assert status["nextAttemptTime"] == _plus(exports, first, 10)
    # Not yet due: no attempt however often it reconciles.
    exports.clock.advance(9)
    assert exports.drive(name) == 1.0
    assert len(exports.receiver.requests) == 1

    exports.clock.advance(1)
    assert exports.drive(name) == 20.0  # the wait doubles
    assert exports.status(name)["lastHTTPStatus"] == 503
    exports.clock.advance(20)
    exports.drive(name)
    status = exports.status(name)
    assert (status["phase"], status["attempts"], status["cycleAttempts"]) == ("Succeeded", 3, 3)
    assert status["firstAttemptTime"] == first
    bodies = {seen.body for seen in exports.receiver.requests}
    assert len(exports.receiver.requests) == 3 and len(bodies) == 1
    assert {seen.key for seen in exports.receiver.requests} == {status["reportID"]}


def test_the_backoff_is_capped_at_max_backoff(exports: Exports) -> None:
    exports.receiver.script = ["500"] * 5
    name = one_export(exports, initialBackoff="10s", maxBackoff="30s")
    waits = []
    for _ in range(4):
        wait = exports.drive(name)
        assert wait is not None
        waits.append(wait)
        exports.clock.advance(wait)
    assert waits == [10.0, 20.0, 30.0, 30.0]


@pytest.mark.parametrize("answer", ["408", "429"])
def test_408_and_429_are_retried(exports: Exports, answer: str) -> None:
    exports.receiver.script = [answer]
    name = one_export(exports)
    assert exports.drive(name) == 10.0
    assert exports.status(name)["lastHTTPStatus"] == int(answer)
    exports.clock.advance(10)
    exports.drive(name)
    assert exports.status(name)["phase"] == "Succeeded"


def test_a_400_fails_the_export_at_once(exports: Exports) -> None:
    exports.receiver.script = ["400"]
    name = one_export(exports)
    exports.drive(name)
    status = exports.status(name)
    assert (status["phase"], status["reason"], status["lastHTTPStatus"]) == (
        "Failed",
        "Refused",
        400,
    )
    assert "HTTP 400" in status["message"]
    assert status["completionTime"] and "nextAttemptTime" not in status
    exports.clock.advance(3600)
    exports.drive(name)
    assert len(exports.receiver.requests) == 1
    warnings = [e for e in exports.api.events() if e.get("reason") == "Refused"]
    assert warnings and warnings[0]["type"] == "Warning"


def test_max_attempts_spent_fails_the_export(exports: Exports) -> None:
    exports.receiver.script = ["500"] * 10
    name = one_export(exports, maxAttempts=3, initialBackoff="1s", maxBackoff="1s")
    for _ in range(2):
        assert exports.drive(name) == 1.0
        exports.clock.advance(1)
    exports.drive(name)
    status = exports.status(name)
    assert (status["phase"], status["reason"]) == ("Failed", "MaxAttemptsExceeded")
    assert (status["attempts"], status["cycleAttempts"]) == (3, 3)
    assert len(exports.receiver.requests) == 3


def test_a_cycle_ends_when_its_next_attempt_would_pass_max_elapsed_time(exports: Exports) -> None:
    exports.receiver.script = ["500"] * 10
    name = one_export(exports, initialBackoff="40s", maxBackoff="40s", maxElapsedTime="1m")
    assert exports.drive(name) == 40.0
    exports.clock.advance(40)
    # The second attempt (at 40 s) fits the minute; a third (at 80 s) would not.
    exports.drive(name)
    status = exports.status(name)
    assert (status["phase"], status["reason"]) == ("Failed", "MaxElapsedTimeExceeded")
    assert status["attempts"] == 2 and len(exports.receiver.requests) == 2


def test_a_missing_token_secret_fails_the_export_without_sending(exports: Exports) -> None:
    exports.api.http.delete("/api/v1/namespaces/default/secrets/fleetdb-token")
    name = one_export(exports)
    exports.drive(name)
    status = exports.status(name)
    assert (status["phase"], status["reason"]) == ("Failed", "Refused")
    assert "fleetdb-token" in status["message"] and "not found" in status["message"]
    assert exports.receiver.requests == []


def test_a_refused_connection_is_retried(exports: Exports) -> None:
    exports.receiver.script = ["refuse"]
    name = one_export(exports)
    assert exports.drive(name) == 10.0
    status = exports.status(name)
    assert status["phase"] == "Pending" and "lastHTTPStatus" not in status
    exports.clock.advance(10)
    exports.drive(name)
    assert exports.status(name)["phase"] == "Succeeded"


def _plus(ex: Exports, stamp_text: str, seconds: int) -> str:
    from datetime import datetime, timedelta

    at = datetime.fromisoformat(stamp_text.replace("Z", "+00:00")) + timedelta(seconds=seconds)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")
