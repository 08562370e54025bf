"""The reported case of issue 11: ``glimmer run --nodes`` naming a node twice. The CLI refuses
it (exit 2, naming the flag) before anything runs; the same nodes named once settle exactly the
units the NVVS documents say the plan asked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glimmer.cli.app import main

REPORTED = "hgx-node-0001,hgx-node-0001,hgx-node-0002"


def test_the_reported_duplicated_nodes_run_exits_2_naming_the_flag_and_writes_no_report(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    code = main(["run", "--nodes", REPORTED, "--profile", "smoke", "--report", str(reports)])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.strip().splitlines() == [
        "error: --nodes: hgx-node-0001 named more than once; name each node once"
    ]
    assert not reports.exists()


def test_the_nodes_named_once_settle_every_unit_the_nvvs_documents_count(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    reports = tmp_path / "reports"
    args = ["run", "--nodes", "hgx-node-0001,hgx-node-0002", "--profile", "smoke"]
    code = main([*args, "--no-faults", "--report", str(reports), "--output", "json"])
    run = json.loads(capsys.readouterr().out)
    assert code == 0
    results = run["status"]["results"]
    assert len(results) == 6  # 3 Node tests x 2 nodes
    for node in ("hgx-node-0001", "hgx-node-0002"):
        doc = json.loads((reports / f"diag-{node}.json").read_text(encoding="utf-8"))
        assert doc["Overall Result"] == "Pass"
        assert "subset" not in doc.get("Warning", "")
