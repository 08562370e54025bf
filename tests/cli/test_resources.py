"""``glimmer validate`` and ``glimmer crds`` as a user runs them."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from glimmer.cli.app import main

REPO = Path(__file__).resolve().parents[2]
BAD = REPO / "tests" / "fixtures" / "bad"
SAMPLES = REPO.parent / "shared" / "conformance" / "glimmer-samples"
GLIMMER = Path(sys.executable).parent / "glimmer"

# JSON cannot carry a comment, so its expectations live here; YAML fixtures say `# expect: ...`.
JSON_EXPECT = {
    "json-syntax-error.json": None,
    "json-top-level-list.json": None,
    "json-wrong-type.json": "spec.durationSeconds",
}
BAD_FILES = sorted(p for p in BAD.iterdir() if p.suffix in (".yaml", ".json"))


def _expected_field(path: Path) -> str | None:
    if path.suffix == ".json":
        return JSON_EXPECT[path.name]
    for line in path.read_text().splitlines():
        if line.startswith("# expect:"):
            field = line.removeprefix("# expect:").strip()
            return None if field == "(none)" else field
    raise AssertionError(f"{path.name} has no '# expect:' header")


def test_there_are_at_least_forty_malformed_inputs() -> None:
    assert len(BAD_FILES) >= 40


def test_there_are_at_least_fourteen_malformed_fleets() -> None:
    assert len([p for p in BAD_FILES if p.name.startswith("fleet-")]) >= 14


@pytest.mark.parametrize("path", BAD_FILES, ids=lambda p: p.name)
def test_a_malformed_input_gives_one_clear_error_and_exit_2_and_writes_nothing(
    path: Path,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    field = _expected_field(path)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith(f"error: {path}:"), "names the file and the line"
    if field is not None:
        assert f", field {field}: " in lines[0]
    assert list(tmp_path.iterdir()) == [], "nothing is written when input is refused"


FLEETS = REPO / "src" / "glimmer" / "data" / "fleets"


def test_validate_accepts_a_fleet_and_checks_it_by_the_fleet_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    good, overlap = (
        FLEETS / "ai-factory.yaml",
        REPO / "tests/fixtures/fleet-bad/overlapping-slots.yaml",
    )
    assert main(["validate", str(good), str(overlap)]) == 2
    out = capsys.readouterr()
    assert out.out == f"ok  Fleet/ai-factory  {good}\n"
    # The overlap is found by building the topology, not by the field checks alone.
    assert out.err.startswith(f"error: {overlap}:39, document 1, Fleet/bad-overlap, field ")
    assert "occupied rack slots overlap" in out.err and out.err.count("\n") == 1


def test_a_fleet_error_names_the_undeclared_rack_in_camel_case_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = BAD / "fleet-undeclared-rack.yaml"
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "field spec.pools[0].placements[0].rack: " in err
    assert "rack 'rack:site-a/pcie-b' is not declared (declared: rack:site-a/pcie-a)" in err


def test_a_snake_case_fleet_field_is_named_as_written_with_its_camel_case_spelling(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = BAD / "fleet-snake-case-field.yaml"
    assert main(["validate", str(path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith(
        "field spec.pools[0].gpus_per_node: field gpus_per_node not found in the Fleet schema "
        "(the Fleet spells it gpusPerNode)"
    )


@pytest.mark.parametrize(
    "name",
    ["threshold-nan-value.yaml", "pair-unknown-comparison.yaml", "json-syntax-error.json"],
)
def test_a_malformed_input_fails_the_installed_command_without_a_traceback(name: str) -> None:
    path = BAD / name
    done = subprocess.run(
        [str(GLIMMER), "validate", str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and str(path) in done.stderr
    field = _expected_field(path)
    assert field is None or f"field {field}" in done.stderr


def test_validate_lists_every_valid_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(SAMPLES)]) == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert f"ok  BurnInTest/disk-io  {SAMPLES / 'disk-io.yaml'}" in lines
    assert len(lines) > 40 and all(line.startswith("ok  ") for line in lines)
    assert out.err == ""


def test_validate_reports_every_error_of_every_file(capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(BAD / "threshold-nan-value.yaml"), str(BAD / "second-document-invalid.yaml")]
    assert main(["validate", *files]) == 2
    out = capsys.readouterr()
    assert len(out.err.splitlines()) == 2
    assert out.out.splitlines() == [f"ok  BurnInTest/t  {files[1]}"]


def test_validate_speaks_json(capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = SAMPLES / "tcp-baseline.yaml", BAD / "threshold-nan-value.yaml"
    assert main(["validate", "--output", "json", str(good), str(bad)]) == 2
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert report["objects"] == [
        {"kind": "BurnInTest", "name": "tcp-baseline", "file": str(good), "document": 1,
         "line": 12},
    ]  # fmt: skip
    (error,) = report["errors"]
    assert error["field"] == "spec.thresholds[0].value" and error["line"] == 12
    assert error["file"] == str(bad) and error["object"] == "BurnInTest/t"


def test_validate_reads_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO((SAMPLES / "disk-io.yaml").read_text()))
    assert main(["validate", "-"]) == 0
    assert capsys.readouterr().out == "ok  BurnInTest/disk-io  <stdin>\n"


def test_crds_prints_the_six_definitions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crds"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["spec"]["names"]["shortNames"][0] for d in docs] == [
        "bit", "bip", "bir", "bisc", "bis", "nfp",
    ]  # fmt: skip


def test_crds_writes_the_manifests_that_are_checked_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["crds", "--output-dir", str(tmp_path)]) == 0
    written = {p.name: p.read_text() for p in tmp_path.iterdir()}
    checked_in = {p.name: p.read_text() for p in (REPO / "deploy" / "crds").iterdir()}
    assert written == checked_in


@pytest.mark.parametrize("text", ["", "# nothing but a comment\n\n"], ids=["empty", "comments"])
def test_validate_refuses_a_file_that_holds_no_document(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "given.yaml"
    path.write_text(text, encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}: holds no glimmer resource (no document at all: empty or comments only)\n"
    )


def test_a_file_that_is_not_valid_yaml_is_one_error_not_a_complaint_about_its_first_part(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "given.yaml"
    path.write_text("[]\n---\n[unclosed\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: {path}:") and "not valid YAML" in line
