"""A ReportExport's life after its first cycle (specs/certify.md §2.9): a new ``retryNonce``
restarts a Failed delivery with the same payload, key and attempt count; ``cancel`` stops
one; retention deletes finished ones (their snapshot with them); plain http only where the
operator allows it; the spec is frozen but for ``cancel`` and ``retryNonce``."""

from __future__ import annotations

from typing import Any

from glimmer.operator.certify.report_export import ExportController
from glimmer.operator.certify.report_export_delivery import Answer, post
from tests.operator.certify.report_export_harness import (
    Exports,
    exports,
    finished_certification,
    one_export,
    policy,
    receiver,
)

__all__ = ["exports", "receiver"]  # the fixtures these tests use


def test_a_new_retry_nonce_starts_a_cycle_with_the_same_payload_key_and_count(
    exports: Exports,
) -> None:
    exports.receiver.script = ["500", "500", "500"]
    name = one_export(exports, maxAttempts=2, initialBackoff="5s", maxBackoff="5s")
    exports.drive(name)
    exports.clock.advance(5)
    exports.drive(name)
    failed = exports.status(name)
    assert (failed["phase"], failed["attempts"], failed["cycleAttempts"]) == ("Failed", 2, 2)

    exports.clock.advance(600)
    exports.patch_spec(name, {"retryNonce": "try-again-1"})
    exports.drive(name)  # the third answer is a 500: this cycle goes on
    status = exports.status(name)
    assert status["observedRetryNonce"] == "try-again-1"
    assert (status["phase"], status["attempts"], status["cycleAttempts"]) == ("Pending", 3, 1)
    assert status["cycleStartedAt"] == status["lastAttemptTime"] != failed["cycleStartedAt"]
    assert status["firstAttemptTime"] == failed["firstAttemptTime"]
    assert "completionTime" not in status
    exports.clock.advance(5)
    exports.drive(name)
    done = exports.status(name)
    assert (done["phase"], done["attempts"], done["cycleAttempts"]) == ("Succeeded", 4, 2)
    # Same bytes, same digest, same key, every attempt of both cycles.
    assert done["sha256"] == failed["sha256"] and done["snapshotRef"] == failed["snapshotRef"]
    assert len({seen.body for seen in exports.receiver.requests}) == 1
    assert {seen.key for seen in exports.receiver.requests} == {done["reportID"]}
    assert len(exports.receiver.requests) == 4


def test_the_same_nonce_again_or_one_on_a_succeeded_export_starts_nothing(
    exports: Exports,
) -> None:
    exports.receiver.script = ["400"]
    name = one_export(exports)
    exports.drive(name)
    exports.patch_spec(name, {"retryNonce": "n1"})
    exports.drive(name)
    assert exports.status(name)["phase"] == "Succeeded"
    assert len(exports.receiver.requests) == 2
    exports.patch_spec(name, {"retryNonce": "n2"})
    exports.drive(name)
    assert exports.status(name)["phase"] == "Succeeded"
    assert len(exports.receiver.requests) == 2


def test_a_nonce_changed_while_a_cycle_runs_is_recorded_and_restarts_nothing(
    exports: Exports,
) -> None:
    exports.receiver.script = ["500", "500"]
    name = one_export(exports, maxAttempts=2, initialBackoff="5s", maxBackoff="5s")
    exports.drive(name)
    exports.patch_spec(name, {"retryNonce": "early"})
    exports.clock.advance(5)
    exports.drive(name)
    status = exports.status(name)
    assert (status["phase"], status["observedRetryNonce"]) == ("Failed", "early")
    exports.drive(name)
    assert len(exports.receiver.requests) == 2


def test_cancel_stops_a_delivery_between_attempts(exports: Exports) -> None:
    exports.receiver.script = ["500"]
    name = one_export(exports)
    assert exports.drive(name) == 10.0
    exports.patch_spec(name, {"cancel": True})
    exports.clock.advance(10)
    exports.drive(name)
    status = exports.status(name)
    assert (status["phase"], status["reason"]) == ("Failed", "Cancelled")
    assert len(exports.receiver.requests) == 1
    # A nonce does not revive a cancelled export.
    exports.patch_spec(name, {"retryNonce": "n1"})
    exports.drive(name)
    assert exports.status(name)["phase"] == "Failed"
    assert len(exports.receiver.requests) == 1


def test_the_spec_is_frozen_but_for_cancel_and_retry_nonce(exports: Exports) -> None:
    name = one_export(exports)
    path = exports.api.path("reportexports", name)
    for change in (
        {"webhook": {"url": "https://elsewhere.example/hook"}},
        {"reportID": "another-key"},
        {"retry": {"maxAttempts": 7}},
    ):
        got = exports.api.http.patch(
            path, json={"spec": change}, headers={"Content-Type": "application/merge-patch+json"}
        )
        assert got.status_code == 422, change
        assert "only cancel and retryNonce may change" in got.text
    exports.patch_spec(name, {"cancel": True, "retryNonce": "x"})


def test_retention_deletes_a_finished_export_and_its_snapshot(exports: Exports) -> None:
    finished_certification(exports.api, "cert-ok", exports.clock.now())
    finished_certification(exports.api, "cert-no", exports.clock.now())
    exports.receiver.script = ["ok", "400"]
    policy(exports.api, exports.receiver.url, retention={"succeeded": "2h", "failed": "5h"})
    made = exports.register()
    by_cert = {m["spec"]["sourceRef"]["name"]: m["metadata"]["name"] for m in made}
    ok, no = by_cert["cert-ok"], by_cert["cert-no"]
    assert exports.drive(ok) == 2 * 3600
    assert exports.drive(no) == 5 * 3600
    snapshot = exports.status(ok)["snapshotRef"]["name"]

    exports.clock.advance(2 * 3600)
    assert exports.drive(ok) is None
    assert exports.api.get("reportexports", ok) is None
    assert exports.api.configmap(snapshot) is None  # owned by the export: collected with it
    assert exports.drive(no) == 3 * 3600
    exports.clock.advance(3 * 3600)
    exports.drive(no)
    assert exports.api.get("reportexports", no) is None
    # Past its retention window the policy does not register either Certification again.
    assert exports.register() == []


def test_plain_http_is_refused_unless_the_operator_allows_it(exports: Exports) -> None:
    exports.restart(allow_plain_http=False)
    name = one_export(exports)
    exports.drive(name)
    status = exports.status(name)
    assert (status["phase"], status["reason"]) == ("Failed", "PlainHTTPRefused")
    assert "--allow-plain-http-exports" in status["message"]
    assert status["sha256"]  # the snapshot is taken all the same
    assert exports.receiver.requests == []
    # The operator restarted with plain http allowed: a nonce sends the same snapshot.
    exports.restart(allow_plain_http=True)
    exports.patch_spec(name, {"retryNonce": "http-allowed"})
    exports.drive(name)
    done = exports.status(name)
    assert (done["phase"], done["attempts"], done["sha256"]) == ("Succeeded", 1, status["sha256"])
    assert len(exports.receiver.requests) == 1


def test_an_export_whose_spec_breaks_the_bounds_fails_without_sending(exports: Exports) -> None:
    name = one_export(exports)
    body = exports.export(name)
    # Written past the policy (the API server checks the durations' syntax, not their bounds).
    body["spec"]["retry"] = {**body["spec"]["retry"], "initialBackoff": "10m", "maxBackoff": "1m"}
    other = {**body, "metadata": {"name": "by-hand", "namespace": body["metadata"]["namespace"]}}
    exports.api.create("reportexports", other)
    exports.drive("by-hand")
    status = exports.status("by-hand")
    assert (status["phase"], status["reason"]) == ("Failed", "InvalidSpec")
    assert "spec.retry.maxBackoff" in status["message"]
    assert exports.receiver.requests == []


def test_a_cancel_landing_during_an_attempt_keeps_that_attempts_answer(exports: Exports) -> None:
    name = one_export(exports)

    def post_while_cancelled(*args: Any) -> Answer:
        exports.patch_spec(name, {"cancel": True})  # the status write after it conflicts
        return post(*args)

    exports.exports = ExportController(
        exports.cluster, exports.clock.now, allow_plain_http=True, poster=post_while_cancelled
    )
    exports.drive(name)
    status = exports.status(name)
    assert (status["phase"], status["attempts"]) == ("Succeeded", 1)  # delivered is delivered
    assert len(exports.receiver.requests) == 1
