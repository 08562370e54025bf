"""The operator process SIGKILLed while a report's POST is in flight (specs/certify.md §2.9):
``python -m glimmer.operator run --allow-plain-http-exports`` as a child process, the receiver
holding the POST unanswered until the kill. The export is ``Delivering`` with the attempt
counted; the restarted operator counts that attempt failed (its answer never came), waits the
backoff and sends the same bytes with the same idempotency key, and the receiver ends with two
POSTs of one report — the at-least-once contract — and the export ``Succeeded``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

import tests.sinks.receiver as receiving
from glimmer.backends.kubernetes.client import connect
from tests.operator.certify.conftest import CERTIFY_CRDS, NS, CertifyAPI
from tests.operator.certify.report_export_harness import (
    finished_certification,
    policy,
    token_secret,
)
from tests.operator.conftest import Operator, eventually
from tests.sinks.receiver import Receiver
from tools.k8s_standin.cluster import StandInCluster, standin_cluster


@pytest.fixture
def standin(tmp_path: Path) -> Iterator[StandInCluster]:
    with standin_cluster(0, tmp_path, network="host", crd_dirs=(CERTIFY_CRDS,)) as cluster:
        yield cluster


def _only_export(api: CertifyAPI) -> dict[str, Any] | None:
    items = api.items("reportexports")
    return items[0] if items else None


def _succeeded(api: CertifyAPI) -> dict[str, Any] | None:
    export = _only_export(api)
    if export is None or (export.get("status") or {}).get("phase") != "Succeeded":
        return None
    return export


def test_a_sigkill_during_the_post_resends_the_same_report_once_restarted(
    standin: StandInCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "delay": the receiver stores the POST and answers only after this long; the operator is
    # killed long before (the attempt's own timeout, 10 s, would end it later still).
    monkeypatch.setattr(receiving, "DELAY_SECONDS", 60.0)
    receiver = Receiver(script=["delay"]).start()
    operator = Operator(
        standin, "--standalone", "--namespace", NS, "--allow-plain-http-exports", name="export"
    )
    try:
        with httpx.Client(base_url=standin.url, timeout=30) as http:
            api = CertifyAPI(
                standin.url, standin.kubeconfig, standin.root, http, connect(standin.kubeconfig)
            )
            token_secret(api)
            finished_certification(api, "cert-a", datetime.now(UTC))
            policy(api, receiver.url, retry={"initialBackoff": "1s", "maxBackoff": "1s"})
            operator.start()
            eventually(lambda: receiver.requests, "the first POST reached the receiver", 120)
            operator.kill()
            export = _only_export(api)
            assert export is not None
            held = export["status"]
            assert (held["phase"], held["attempts"]) == ("Delivering", 1)

            operator.start()
            done = eventually(lambda: _succeeded(api), "the restarted operator delivered", 120)
            status = done["status"]
            assert status["attempts"] == 2 and status["reason"] == "Delivered"
            assert status["sha256"] == held["sha256"]
            first, second = receiver.requests
            assert first.body == second.body
            assert first.key == second.key == status["reportID"]
            assert "AttemptInterrupted" in operator.output()
            assert operator.stop() == 0
    finally:
        operator.kill()
        receiver.stop()
