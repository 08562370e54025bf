"""A file given where a Fleet is read (``--fleet FILE``) that holds no Fleet is refused naming
the file and what it holds, never read as some default fleet."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.cli.app import main
from glimmer.errors import InputError, InputErrors
from glimmer.fleet.load import read_fleet

REPO = Path(__file__).resolve().parents[2]
PROFILE = REPO / "src" / "glimmer" / "data" / "profiles" / "smoke.yaml"
CERTIFICATION = REPO / "tests" / "certify" / "catalog" / "samples" / "certification-h100.yaml"
FLEET = REPO / "src" / "glimmer" / "data" / "fleets" / "ai-factory-fixture.yaml"


def _refusal(path: Path) -> str:
    with pytest.raises((InputError, InputErrors)) as caught:
        read_fleet(str(path))
    error = caught.value
    return str(error.errors[0] if isinstance(error, InputErrors) else error)


@pytest.mark.parametrize(
    ("text", "held"),
    [
        ("", "holds no Fleet: the file is empty"),
        ("# only a comment\n\n", "holds no Fleet: no document at all (comments only)"),
        ("- a\n- b\n", "holds a list, not a Fleet"),
    ],
    ids=["empty", "comments-only", "list"],
)
def test_a_fleet_file_holding_no_fleet_is_refused_naming_what_it_holds(
    tmp_path: Path, text: str, held: str
) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(text, encoding="utf-8")
    refusal = _refusal(path)
    assert refusal.startswith(str(path)) and held in refusal


@pytest.mark.parametrize(
    ("path", "held"),
    [(PROFILE, "BurnInProfile/smoke"), (CERTIFICATION, "Certification/")],
    ids=["profile", "certification"],
)
def test_a_fleet_file_holding_another_kind_is_refused_naming_that_kind(
    path: Path, held: str
) -> None:
    refusal = _refusal(path)
    assert refusal.startswith(f"{path}:") and f"holds {held}" in refusal
    assert "not a Fleet" in refusal


def test_a_fleet_file_of_two_documents_names_both(tmp_path: Path) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(FLEET.read_text() + "---\n" + PROFILE.read_text(), encoding="utf-8")
    assert "found 2 (Fleet/ai-factory-fixture, BurnInProfile/smoke)" in _refusal(path)


def test_a_binary_fleet_file_is_one_line_of_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_bytes(bytes(range(256)))
    assert main(["fleet", "show", "--fleet", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"error: {path}: not a UTF-8 text file")
