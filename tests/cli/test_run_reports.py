"""``glimmer run --report``: a folder the reports cannot go to is refused before anything runs,
and the files written are summarised in one line however many nodes ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.cli.app import main


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A plain `glimmer run` writes ./glimmer-report; keep that out of the repository.
    monkeypatch.chdir(tmp_path)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["run", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_report_naming_an_existing_file_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "report.txt").write_text("keep me", encoding="utf-8")
    code, out, err = _run(capsys, "--no-faults", "--report", "report.txt")
    assert code == 2
    assert out == ""  # nothing ran: no header, no progress, no verdict
    assert err == (
        "error: --report report.txt: is a file, not a folder: give a folder to write the "
        "reports into\n"
    )
    assert (tmp_path / "report.txt").read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt"]


def test_report_below_an_existing_file_is_refused_before_the_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "afile").write_text("", encoding="utf-8")
    code, out, err = _run(capsys, "--no-faults", "--output", "json", "--report", "afile/out")
    assert code == 2 and out == ""
    assert err == ("error: --report afile/out: cannot be created: afile is a file, not a folder\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_a_dry_run_with_a_report_file_is_refused_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "r").write_text("", encoding="utf-8")
    code, out, err = _run(capsys, "--dry-run", "--report", "r")
    assert code == 2 and out == "" and err.startswith("error: --report r: is a file")


def test_a_plain_run_whose_default_report_folder_is_a_file_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "glimmer-report").write_text("", encoding="utf-8")
    code, out, err = _run(capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: report folder glimmer-report: is a file, not a folder")
    assert err.count("\n") == 1


def test_the_report_files_are_one_summary_line_not_a_line_per_node(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = _run(capsys, "--no-faults", "--report", "out")
    assert code == 0
    nodes = len(list((tmp_path / "out").glob("diag-*.json")))
    assert nodes == 22
    lines = [line for line in out.splitlines() if "out/" in line]
    assert lines == [f"Reports: out/ ({nodes + 3} files: 1 JUnit, 1 HTML, 1 Markdown, 22 NVVS)"]


def test_with_json_output_the_summary_line_goes_to_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = _run(capsys, "--no-faults", "--output", "json", "--report", "out")
    assert code == 0 and "reports:" not in out
    assert err.splitlines() == ["reports: out/ (25 files: 1 JUnit, 1 HTML, 1 Markdown, 22 NVVS)"]


def test_a_second_run_into_the_same_folder_leaves_only_its_own_reports(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert _run(capsys, "--no-faults", "--report", "out")[0] == 0
    (tmp_path / "out" / "notes.txt").write_text("mine", encoding="utf-8")
    code, _, _ = _run(
        capsys, "--no-faults", "--nodes", "hgx-node-0001,hgx-node-0002", "--report", "out"
    )
    assert code == 0
    left = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert left == [
        "burn-in-report.html",
        "burnin-report.md",
        "diag-hgx-node-0001.json",
        "diag-hgx-node-0002.json",
        "junit.xml",
        "notes.txt",
    ]


RUN_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "runs" / "pair-failed.json"


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("afile", "error: --output-dir afile: is a file, not a folder"),
        ("afile/out", "error: --output-dir afile/out: cannot be created: afile is a file"),
    ],
)
def test_glimmer_report_into_a_file_is_one_line_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str, says: str
) -> None:
    (tmp_path / "afile").write_text("mine", encoding="utf-8")
    code = main(["report", str(RUN_FILE), "--output-dir", target])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.startswith(says) and captured.err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "mine"
