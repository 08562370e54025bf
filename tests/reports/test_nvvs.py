"""NVVS-compatible JSON (§6.4) beyond scenario 59: entities, categories, the subset rule."""

from __future__ import annotations

import json
from typing import Any

from conftest import STAMP, load_run
from glimmer.fleet.load import load_topology
from glimmer.reports import assemble
from glimmer.reports.nvvs import UNASSIGNED_FILE, file_name, overall, render_nvvs


def _docs(name: str, fleet: bool = False) -> dict[str, dict[str, Any]]:
    topo = load_topology("ai-factory") if fleet else None
    rendered = render_nvvs(assemble(load_run(name), topo, stamp=STAMP))
    return {k: json.loads(v) for k, v in rendered.items()}


def _results(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        t["name"]: t["results"][0]
        for c in doc["DCGM Diagnostic"]["test_categories"]
        for t in c["tests"]
    }


def test_overall_result_order_is_fail_not_run_pass_skip() -> None:
    assert overall(["Pass", "Not Run", "Fail"]) == "Fail"
    assert overall(["Pass", "Not Run", "Skip"]) == "Not Run"
    assert overall(["Skip", "Pass"]) == "Pass"
    assert overall(["Skip"]) == "Skip"
    assert overall([]) == "Not Run"


def test_a_node_verdict_is_emitted_once_host_kinds_bind_to_the_cpu() -> None:
    doc = _docs("acceptance-failed", fleet=True)["diag-hgx-node-0001.json"]
    results = _results(doc)
    assert results["host-fault-counters"]["entity_group"] == "CPU"
    assert results["host-fault-counters"]["entity_id"] == 0
    clock = results["sustained-clock"]
    assert "entity_group" not in clock
    assert clock["info"][0].startswith("scope=node gpus=0,1,2,3,4,5,6,7")
    assert len(doc["entity_groups"][0]["entities"]) == 8
    assert doc["metadata"] == {"Driver Version Detected": "570.133.20"}


def test_categories_come_in_their_fixed_order_and_tests_by_name() -> None:
    doc = _docs("acceptance-failed")["diag-nvl-node-0004.json"]
    categories = doc["DCGM Diagnostic"]["test_categories"]
    assert [c["category"] for c in categories] == ["Hardware", "Stress"]
    hardware = [t["name"] for t in categories[0]["tests"]]
    assert hardware == sorted(hardware) == ["dcgm-diagnostics", "host-fault-counters"]
    assert doc["Overall Result"] == "Fail"


def test_node_less_results_go_only_to_diag_json() -> None:
    docs = _docs("mixed-outcomes")
    assert UNASSIGNED_FILE in docs
    assert "resolve" in _results(docs[UNASSIGNED_FILE])
    assert all("resolve" not in _results(d) for k, d in docs.items() if k != UNASSIGNED_FILE)
    assert "node" not in docs[UNASSIGNED_FILE]["aux_data"]


def test_a_record_missing_planned_executions_claims_no_overall_result() -> None:
    run = load_run("acceptance-failed")
    assert run.status is not None and run.status.results
    run.status.results = run.status.results[:-3]  # as after failFast: later units never ran
    docs = {k: json.loads(v) for k, v in render_nvvs(assemble(run, stamp=STAMP)).items()}
    assert {d["Overall Result"] for d in docs.values()} == {"Not Run"}
    assert all("subset" in d["Warning"] for d in docs.values())


def test_progress_is_said_in_runtime_error_and_file_names_are_safe() -> None:
    doc = _docs("soak-in-progress")["diag-nvl-node-0001.json"]
    assert "progress" in doc["runtime_error"]
    assert doc["aux_data"]["warnings"] == ["no terminal result: the run had not finished"]
    assert file_name("a/b c") == "diag-a_b_c.json"
