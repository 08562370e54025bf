"""``glimmer certify status NAME`` and ``certify cancel NAME`` against the API stand-in: the
progress of a running Certification, the same report card as the simulator's once it is
finished (exit 0 certified, 1 not, never a pass without a report), and cancel naming what goes
with the Certification."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from glimmer.certify.report_card import render
from glimmer.certify.result import from_doc
from glimmer.cli import certify_cluster
from glimmer.cli.app import main
from tests.cli.certify_cluster_standin import (
    CERTS,
    WORKFLOWS,
    StandIn,
    create_certification,
    ok,
    report_doc,
    served,
    standin,
    write_report,
    write_status,
)

__all__ = ["served", "standin"]  # the fixtures, used by name

BOTH = [
    ("communication", "nccl-all-reduce", "Succeeded"),
    ("diagnostics", "dcgm-level2", "Succeeded"),
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["certify", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _finished(http: httpx.Client, doc: dict[str, Any], phase: str = "Succeeded") -> None:
    create_certification(http)
    statuses = [(d, v, phase) for d, v, _ in BOTH]
    write_status(http, "acceptance", phase, statuses, "AllCategoriesCompleted")
    write_report(http, "acceptance", doc)


def test_a_running_certification_shows_each_categorys_status(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    create_certification(standin.http)
    statuses = [BOTH[0], ("diagnostics", "dcgm-level2", "InProgress")]
    write_status(standin.http, "acceptance", "InProgress", statuses, "CategoryRunning", "2/2")
    code, out, _ = run(capsys, "status", "acceptance")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Certification default/acceptance: InProgress"
    assert "communication/nccl-all-reduce  Succeeded" in out
    assert "diagnostics/dcgm-level2        InProgress" in out
    assert "Certification Report" not in out


def test_a_certification_no_controller_has_touched_lists_its_categories_pending(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    create_certification(standin.http)
    code, out, _ = run(capsys, "status", "acceptance", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["phase"] == "Pending" and doc["result"] is None
    assert [c["status"] for c in doc["categoryStatuses"]] == ["Pending", "Pending"]


def test_a_finished_certification_prints_the_simulators_report_card(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = report_doc()
    _finished(standin.http, doc)
    code, out, _ = run(capsys, "status", "acceptance")
    assert code == 0
    assert out.endswith(render(from_doc(doc)))
    assert "Result: PASSED" in out


def test_a_failed_certification_exits_1_with_its_failed_nodes(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    _finished(standin.http, report_doc(failing=True), phase="Failed")
    code, out, _ = run(capsys, "status", "acceptance")
    assert code == 1
    assert "Result: FAILED" in out and "node-c (ThresholdViolation)" in out


def test_a_finished_certification_without_its_report_is_never_a_pass(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    create_certification(standin.http)
    write_status(standin.http, "acceptance", "Succeeded", BOTH, "AllCategoriesCompleted")
    code, _, err = run(capsys, "status", "acceptance")
    assert code == 1
    assert "ConfigMap default/acceptance-report does not exist" in err and "not certified" in err


@pytest.mark.parametrize(
    ("text", "says"),
    [("{not json", "not JSON"), ('{"name": "x"}', "is not a saved certification result")],
)
def test_an_unreadable_report_is_named_and_not_a_pass(
    standin: StandIn, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    create_certification(standin.http)
    write_status(standin.http, "acceptance", "Succeeded", BOTH, "AllCategoriesCompleted")
    write_report(standin.http, "acceptance", text)
    code, _, err = run(capsys, "status", "acceptance")
    assert code == 1 and "acceptance-report result.json" in err and says in err


def test_a_passing_report_under_a_failed_condition_is_not_certified(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    # The condition and the report disagree: the worse one decides.
    _finished(standin.http, report_doc(), phase="Failed")
    code, _, err = run(capsys, "status", "acceptance")
    assert code == 1 and "is Failed" in err


def test_status_json_carries_the_result_document(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = report_doc()
    _finished(standin.http, doc)
    code, out, _ = run(capsys, "status", "acceptance", "-o", "json")
    got = json.loads(out)
    assert code == 0 and got["phase"] == "Succeeded" and got["result"] == doc


def test_an_unknown_certification_is_exit_2_naming_it(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "status", "nope", "-n", "default")
    assert code == 2 and "no Certification nope in namespace default" in err


def test_cancel_deletes_the_certification_and_names_its_workflows(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    create_certification(standin.http)
    from tests.api.certify.cluster_kind_samples import workflow

    flow = workflow("acceptance-communication-nccl")
    flow["metadata"]["labels"] = {"certify.glimmer.ai/certification": "acceptance"}
    ok(standin.http.post(WORKFLOWS, json=flow))
    code, out, _ = run(capsys, "cancel", "acceptance")
    assert code == 0
    assert "deleted Certification default/acceptance (Pending)" in out
    assert "its 1 Workflow(s) and their Jobs: acceptance-communication-nccl" in out
    assert standin.http.get(f"{CERTS}/acceptance").status_code == 404


def test_cancel_of_an_unknown_certification_is_exit_2(
    standin: StandIn, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "cancel", "nope")
    assert code == 2 and "no Certification nope" in err


def test_the_report_is_where_the_certification_controller_writes_it() -> None:
    from glimmer.operator.certify import certification

    # One name for the writer and the reader, defined below both.
    assert certification.report_name is certify_cluster.report_name
    assert certification.REPORT_KEY == certify_cluster.REPORT_KEY == "result.json"
    assert certify_cluster.report_name("acceptance") == "acceptance-report"
    assert len(certify_cluster.report_name("a" * 70)) == 63
