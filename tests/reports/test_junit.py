"""JUnit XML (§6.2), held to the Ant schema by xmllint."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import RUN_NAMES, STAMP, ensure_tool, load_run
from glimmer.api.run import BurnInRun
from glimmer.reports import assemble
from glimmer.reports.junit import clean, render_junit


def _xml(run: BurnInRun) -> ET.Element:
    return ET.fromstring(render_junit(assemble(run, stamp=STAMP)))


def _case(root: ET.Element, suite: str, name: str) -> ET.Element:
    found = root.find(f"testsuite[@name='{suite}']/testcase[@name='{name}']")
    assert found is not None, (suite, name)
    return found


@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_fixture_validates_against_the_junit_schema(
    name: str, shared_dir: Path, tmp_path: Path
) -> None:
    xmllint = ensure_tool("xmllint", "ensure_xmllint.sh")
    path = tmp_path / "junit.xml"
    path.write_text(render_junit(assemble(load_run(name), stamp=STAMP)), encoding="utf-8")
    schema = shared_dir / "schemas" / "junit" / "JUnit.xsd"
    done = subprocess.run(
        [xmllint, "--noout", "--schema", str(schema), str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_phases_map_to_error_failure_skipped_and_nothing() -> None:
    root = _xml(load_run("mixed-outcomes"))
    assert list(_case(root, "hgx-node-0002", "host-fault-counters")) == []
    skipped = _case(root, "hgx-node-0002", "nvfp4-smoke").find("skipped")
    assert skipped is not None and "FP4_GEMM_SKIP" in (skipped.get("message") or "")
    error = _case(root, "nvl-node-0002", "nvfp4-smoke").find("error")
    assert error is not None and error.get("type") == "Error"
    assert "hardware was NOT judged" in (error.text or "")
    resolve = _case(root, "unassigned", "resolve").find("error")
    assert resolve is not None and resolve.get("type") == "Error"


def test_a_failure_lists_every_violation_with_who_has_to_act() -> None:
    root = _xml(load_run("pair-failed"))
    case = _case(root, "links", "rdma-write-bandwidth (pair: nvl-node-0005 <-> nvl-node-0004)")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "Failed"
    assert failure.text == (
        "[hardware fell short] threshold 0 on bandwidthGbps: "
        "bandwidthGbps: got 200.12, need GreaterThanOrEqual 360 (Unsatisfied)"
    )


def test_an_unsettled_or_unknown_phase_is_an_unknown_error() -> None:
    root = _xml(load_run("soak-in-progress"))
    running = root.find("testsuite[@name='hgx-node-0001']/testcase/error")
    assert running is not None and running.get("type") == "Unknown"
    run = load_run("pair-passed")
    assert run.status is not None and run.status.results
    run.status.results[0] = run.status.results[0].model_copy(update={"phase": "Exploded"})
    case = _xml(run).find("testsuite[@name='links']/testcase")
    assert case is not None
    error = case.find("error")
    assert error is not None and error.get("type") == "Unknown"
    assert "Exploded" in (error.get("message") or "")


def test_one_testcase_per_test_and_unit_with_metrics_as_suite_properties() -> None:
    root = _xml(load_run("acceptance-failed"))
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites][:2] == ["hgx-node-0001", "hgx-node-0002"]
    assert all(len(s.findall("testcase")) == 5 for s in suites)
    props = {
        p.get("name"): p.get("value")
        for p in root.findall("testsuite[@name='hgx-node-0001']/properties/property")
    }
    assert props["run"] == "lab/accept-1"
    assert props["sustained-clock / sustainedClockPct"] == "19.37"
    suite = root.find("testsuite[@name='hgx-node-0001']")
    assert suite is not None and suite.get("failures") == "1" and suite.get("errors") == "0"


def test_characters_xml_cannot_carry_are_replaced_not_written() -> None:
    assert clean("ok\x00\x1b[31m\ttab") == "ok\ufffd\ufffd[31m\ttab"
    run = load_run("pair-passed")
    assert run.status is not None and run.status.results
    run.status.results[0].message = 'bad \x07 bell <tag> & "quote" -- end'
    ET.fromstring(render_junit(assemble(run, stamp=STAMP)))  # parses: nothing unescaped
