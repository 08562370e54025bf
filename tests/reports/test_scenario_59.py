"""Scenario 59 of burn-in spec §11.2: what the report formats promise.

JUnit maps Error→<error>, Failed→<failure>, an unknown phase→<error type="Unknown">; NVVS emits
one document per node, a link result in both endpoint documents, Fail beating Not Run, baseline
Pass→Skip but Fail stays Fail, no error_id, no NVIDIA plugin names, a disclaimer in aux_data;
the HTML page makes no external request and has no script.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

from conftest import RUN_NAMES, STAMP, load_run
from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import Phase
from glimmer.reports import assemble
from glimmer.reports.html import render_html
from glimmer.reports.junit import render_junit
from glimmer.reports.nvvs import render_nvvs

# DCGM's plugin names, as test names and as display names: none may appear as a test name.
NVIDIA_PLUGINS = {
    "software", "pcie", "memory", "diagnostic", "targeted_stress", "targeted_power",
    "memory_bandwidth", "sm_stress", "memtest", "pulse_test", "eud", "context_create",
    "nvbandwidth", "Software", "PCIe", "Memory", "Diagnostic", "Targeted Stress",
    "Targeted Power", "Memory Bandwidth", "SM Stress", "Memtest", "Pulse Test", "EUD",
}  # fmt: skip


def _docs(run: BurnInRun) -> dict[str, dict[str, Any]]:
    return {k: json.loads(v) for k, v in render_nvvs(assemble(run, stamp=STAMP)).items()}


def _tests(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for c in doc["DCGM Diagnostic"]["test_categories"] for t in c["tests"]}


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_junit_maps_error_failure_and_unknown_phases() -> None:
    run = load_run("mixed-outcomes")
    assert run.status is not None and run.status.results
    results = run.status.results
    results[0] = results[0].model_copy(update={"phase": Phase.FAILED})
    results[1] = results[1].model_copy(update={"phase": "Exploded"})
    root = ET.fromstring(render_junit(assemble(run, stamp=STAMP)))
    by_case = {
        (s.get("name"), c.get("name")): c
        for s in root.iter("testsuite")
        for c in s.iter("testcase")
    }
    failure = by_case[("hgx-node-0002", "host-fault-counters")].find("failure")
    assert failure is not None and failure.get("type") == "Failed"
    unknown = by_case[("nvl-node-0002", "host-fault-counters")].find("error")
    assert unknown is not None and unknown.get("type") == "Unknown"
    error = by_case[("nvl-node-0002", "nvfp4-smoke")].find("error")
    assert error is not None and error.get("type") == "Error"


def test_nvvs_one_document_per_node_and_a_link_in_both_endpoint_documents() -> None:
    docs = _docs(load_run("pair-failed"))
    assert sorted(docs) == ["diag-nvl-node-0004.json", "diag-nvl-node-0005.json"]
    for name, doc in docs.items():
        link = _tests(doc)["rdma-write-bandwidth (link)"]
        info = link["results"][0]["info"]
        assert "link=nvl-node-0005<->nvl-node-0004" in info
        assert "NOTE: this verdict is about the link, not about this endpoint" in info
        assert "entity_group" not in link["results"][0]
        peer = "nvl-node-0005" if "0004" in name else "nvl-node-0004"
        assert f"peer={peer}" in info
        assert doc["Overall Result"] == "Fail"
    node_docs = _docs(load_run("acceptance-failed"))
    assert len(node_docs) == 10


def test_nvvs_fail_beats_not_run() -> None:
    run = load_run("mixed-outcomes")
    assert run.status is not None and run.status.results
    # nvl-node-0002: nvfp4-smoke errored (Not Run); now its host test fails too.
    results = run.status.results
    results[1] = results[1].model_copy(update={"phase": Phase.FAILED})
    doc = _docs(run)["diag-nvl-node-0002.json"]
    statuses = {n: t["test_summary"]["status"] for n, t in _tests(doc).items()}
    assert statuses == {"host-fault-counters": "Fail", "nvfp4-smoke": "Not Run"}
    assert doc["Overall Result"] == "Fail"
    assert _docs(load_run("mixed-outcomes"))["diag-nvl-node-0002.json"]["Overall Result"] == (
        "Not Run"
    )


def test_nvvs_baseline_turns_pass_into_skip_but_a_fail_stays_fail() -> None:
    docs = _docs(load_run("baseline"))
    planted = _tests(docs["diag-hgx-node-0001.json"])
    assert planted["sustained-clock"]["test_summary"]["status"] == "Fail"
    assert planted["host-fault-counters"]["test_summary"]["status"] == "Skip"
    assert docs["diag-hgx-node-0001.json"]["Overall Result"] == "Fail"
    healthy = docs["diag-hgx-node-0002.json"]
    assert {t["test_summary"]["status"] for t in _tests(healthy).values()} == {"Skip"}
    assert healthy["Overall Result"] == "Skip"
    assert "nothing was certified" in healthy["Warning"]


def test_nvvs_never_claims_to_be_nvidia_output() -> None:
    for name in RUN_NAMES:
        for file, doc in _docs(load_run(name)).items():
            assert "error_id" not in _keys(doc), file
            assert "DCGM_FR_" not in json.dumps(doc), file
            assert not set(_tests(doc)) & NVIDIA_PLUGINS, file
            aux = doc["aux_data"]
            assert "not produced or endorsed by NVIDIA" in aux["notice"]
            assert aux["schema"] == "NVVS-compatible"


def test_nvvs_masks_a_dcgm_finding_code_in_runner_text() -> None:
    run = load_run("mixed-outcomes")
    assert run.status is not None and run.status.results
    run.status.results[3].message = "DCGM_FR_MEMORY_ALLOC: could not allocate"
    text = json.dumps(_docs(run))
    assert "DCGM_FR_" not in text and "could not allocate" in text


def test_html_makes_no_external_request_and_has_no_script() -> None:
    for name in RUN_NAMES:
        page = render_html(assemble(load_run(name), stamp=STAMP))
        assert "<script" not in page.lower()
        assert not re.search(r"""(?:src|href|xlink:href)\s*=\s*["']?\s*(?:https?:)?//""", page)
        assert "@import" not in page and "url(" not in page
        assert "http://" not in page and "https://" not in page
