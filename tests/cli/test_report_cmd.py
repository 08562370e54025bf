"""``glimmer report RUN --format … -d DIR``: files written, paths printed, bad input exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from glimmer.cli.app import main

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


def test_all_formats_are_written_and_summarised_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = RUNS / "pair-failed.json"
    assert main(["report", str(run), "--format", "all", "-d", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    expected = [
        "junit.xml",
        "burn-in-report.html",
        "burnin-report.md",
        "diag-nvl-node-0004.json",
        "diag-nvl-node-0005.json",
    ]
    assert printed == f"Reports: {tmp_path}/ (5 files: 1 JUnit, 1 HTML, 1 Markdown, 2 NVVS)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(expected)
    assert all((tmp_path / name).stat().st_size > 0 for name in expected)
    doc = json.loads((tmp_path / "diag-nvl-node-0004.json").read_text(encoding="utf-8"))
    assert doc["Overall Result"] == "Fail"


def test_formats_can_be_picked_and_a_yaml_run_reads_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads((RUNS / "mixed-outcomes.json").read_text(encoding="utf-8"))
    run = tmp_path / "run.yaml"
    run.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / "out"
    formats = ["--format", "md,junit", "--format", "nvvs"]
    assert main(["report", str(run), *formats, "-d", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(
        [
            "burnin-report.md",
            "junit.xml",
            "diag-hgx-node-0002.json",
            "diag-nvl-node-0002.json",
            "diag.json",
        ]
    )
    assert "Burn-in report — `lab/mixed-1`" in (out / "burnin-report.md").read_text("utf-8")
    capsys.readouterr()


def test_a_fleet_places_nodes_in_their_racks(tmp_path: Path) -> None:
    run = RUNS / "acceptance-failed.json"
    args = ["report", str(run), "--format", "html", "-d", str(tmp_path), "--fleet", "ai-factory"]
    assert main(args) == 0
    page = (tmp_path / "burn-in-report.html").read_text(encoding="utf-8")
    assert "Racks from the fleet topology" in page and "nvl-a" in page


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["no-such-run.json"], "no such file"),
        ([str(RUNS / "pair-failed.json"), "--format", "pdf"], "unknown report format 'pdf'"),
        ([str(RUNS / "pair-failed.json"), "--fleet", "no-such-fleet"], "no-such-fleet"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", *args, "-d", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_file_that_is_not_a_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"apiVersion": "burnin.glimmer.ai/v1alpha1", "kind": "BurnInRun"}', "utf-8")
    assert main(["report", str(bad), "-d", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    profile = tmp_path / "profile.yaml"
    profile.write_text(
        "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInProfile\nmetadata: {name: p}\n"
        "spec: {tests: [{testRef: x}]}\n",
        "utf-8",
    )
    assert main(["report", str(profile), "-d", str(tmp_path / "out")]) == 2
    assert "expected exactly one BurnInRun" in capsys.readouterr().err


def test_what_glimmer_run_writes_is_what_glimmer_report_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The contract between the two commands: `glimmer run --output json` on the simulator.
    main(["run", "--output", "json", "--nodes", "hgx-node-0001,nvl-node-0004"])
    run = tmp_path / "run.json"
    run.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["report", str(run), "-d", str(tmp_path / "out"), "--fleet", "ai-factory"]) == 0
    assert "(5 files: 1 JUnit, 1 HTML, 1 Markdown, 2 NVVS)" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "burn-in-report.html",
        "burnin-report.md",
        "diag-hgx-node-0001.json",
        "diag-nvl-node-0004.json",
        "junit.xml",
    ]
    markdown = (tmp_path / "out" / "burnin-report.md").read_text(encoding="utf-8")
    assert "| `hgx-node-0001` |" in markdown and "FAIL" in markdown


@pytest.mark.parametrize("cap", ["2147483647", "2147483648", "3000000000"])
def test_a_run_saved_with_any_max_concurrent_glimmer_accepts_reads_back(
    cap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # spec.maxConcurrentNodes is an int32: the flag takes what the saved run can hold, so
    # whatever glimmer run accepts, glimmer report reads back.
    argv = ["run", "--fleet", "ai-factory-fixture", "--profile", "smoke", "--no-faults",
            "--max-concurrent", cap, "--output", "json",
            "--report", str(tmp_path / "run-reports")]  # fmt: skip
    code = main(argv)
    out = capsys.readouterr()
    if int(cap) > 2**31 - 1:
        assert (
            code == 2 and out.err == f"error: --max-concurrent {cap}: must be at most 2147483647\n"
        )
        return
    assert code == 0
    saved = tmp_path / "run.json"
    saved.write_text(out.out, encoding="utf-8")
    assert main(["report", str(saved), "-d", str(tmp_path / "reports")]) == 0
