"""A report folder holds exactly one run's reports, written atomically with the process umask;
the user's own files in it are never touched, and a folder that cannot be written is refused."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import RUN_NAMES, STAMP, load_run
from glimmer.errors import InputError
from glimmer.reports import assemble, write_reports
from glimmer.reports.folder import (
    MARKS,
    folder_problem,
    format_of,
    owned_files,
    refuse_unwritable,
    summary,
    write_atomically,
)
from glimmer.reports.nvvs import file_name
from glimmer.reports.write import render


@pytest.fixture
def umask_027() -> Iterator[None]:
    saved = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(saved)


def test_a_reused_folder_holds_exactly_the_files_of_this_run(tmp_path: Path) -> None:
    # The earlier run had more nodes: its diag-*.json of nodes this run does not have go.
    big = write_reports(load_run("acceptance-failed"), tmp_path, stamp=STAMP)
    small = write_reports(load_run("pair-failed"), tmp_path, stamp=STAMP)
    assert len(big) > len(small)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in small)


def test_writing_fewer_formats_removes_the_earlier_runs_other_formats(tmp_path: Path) -> None:
    write_reports(load_run("acceptance-failed"), tmp_path, stamp=STAMP)
    written = write_reports(load_run("pair-failed"), tmp_path, ["junit"], stamp=STAMP)
    assert [p.name for p in tmp_path.iterdir()] == [p.name for p in written] == ["junit.xml"]


def test_the_users_files_in_a_reused_folder_are_left_alone(tmp_path: Path) -> None:
    write_reports(load_run("acceptance-failed"), tmp_path, stamp=STAMP)
    # A real `dcgmi diag -j` output under glimmer's naming scheme, an empty file, notes.
    theirs = {
        "diag-rack7-node3.json": json.dumps({"DCGM GPU Diagnostic": {"version": "3.3"}}),
        "diag-empty.json": "",
        "junit-other.xml": "<testsuites/>",
        "notes.txt": "ticket 1234",
    }
    for name, text in theirs.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "sub").mkdir()
    written = write_reports(load_run("pair-failed"), tmp_path, stamp=STAMP)
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {p.name for p in written} | set(theirs) | {"sub"}
    for name, text in theirs.items():
        assert (tmp_path / name).read_text(encoding="utf-8") == text


def test_an_interrupted_writes_leftover_is_removed_but_a_users_dotfile_is_not(
    tmp_path: Path,
) -> None:
    (tmp_path / ".junit.xml.0a1b2c3d.tmp").write_text("<half", encoding="utf-8")
    (tmp_path / ".diag-n1.json.k2_x9q0z").write_text("{", encoding="utf-8")  # older naming
    (tmp_path / ".notes.0a1b2c3d.tmp").write_text("mine", encoding="utf-8")
    written = write_reports(load_run("pair-failed"), tmp_path, ["md"], stamp=STAMP)
    assert {p.name for p in tmp_path.iterdir()} == {written[0].name, ".notes.0a1b2c3d.tmp"}


@pytest.mark.usefixtures("umask_027")
def test_report_files_are_created_with_the_process_umask(tmp_path: Path) -> None:
    written = write_reports(load_run("acceptance-failed"), tmp_path / "new", stamp=STAMP)
    modes = {stat.S_IMODE(p.stat().st_mode) for p in written}
    assert modes == {0o640}
    assert stat.S_IMODE((tmp_path / "new").stat().st_mode) == 0o750


def test_a_rewritten_report_takes_the_umask_of_the_process_that_wrote_it(tmp_path: Path) -> None:
    target = tmp_path / "junit.xml"
    saved = os.umask(0o022)
    try:
        write_atomically(target, "one")
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
        os.umask(0o002)
        write_atomically(target, "two")
        assert stat.S_IMODE(target.stat().st_mode) == 0o664
    finally:
        os.umask(saved)
    assert target.read_text(encoding="utf-8") == "two"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "junit.xml"
    target.write_text("old", encoding="utf-8")

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        write_atomically(target, "new")
    assert [p.name for p in tmp_path.iterdir()] == ["junit.xml"]
    assert target.read_text(encoding="utf-8") == "old"


def test_a_write_that_fails_midway_is_one_input_error_naming_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(InputError, match=r"report folder .*: No space left on device"):
        write_reports(load_run("pair-failed"), tmp_path / "out", stamp=STAMP)


def test_a_report_folder_that_is_a_file_is_refused_and_the_file_is_untouched(
    tmp_path: Path,
) -> None:
    existing = tmp_path / "report.html"
    existing.write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="is a file, not a folder"):
        write_reports(load_run("pair-failed"), existing, stamp=STAMP)
    assert existing.read_text(encoding="utf-8") == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_a_report_folder_below_a_file_is_refused_naming_the_flag_and_creating_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "afile").write_text("", encoding="utf-8")
    with pytest.raises(InputError) as refused:
        refuse_unwritable(tmp_path / "afile" / "sub" / "deeper", "--report")
    message = str(refused.value)
    assert message.startswith(f"--report {tmp_path / 'afile' / 'sub' / 'deeper'}: ")
    assert "afile is a file, not a folder" in message and "\n" not in message
    assert [p.name for p in tmp_path.iterdir()] == ["afile"]


def test_a_missing_folder_under_a_writable_one_is_fine_and_is_not_created(tmp_path: Path) -> None:
    assert folder_problem(tmp_path / "a" / "b") is None
    assert folder_problem(tmp_path) is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", RUN_NAMES)
def test_every_file_a_run_writes_carries_the_mark_of_its_format(name: str) -> None:
    # Without its mark a stale file of an earlier run would never be cleaned up.
    files = render(assemble(load_run(name), stamp=STAMP), ["all"])
    for file, text in files.items():
        fmt = format_of(file)
        assert fmt is not None, file
        assert MARKS[fmt] in text, file


def test_files_glimmer_wrote_are_found_as_its_own(tmp_path: Path) -> None:
    written = write_reports(load_run("acceptance-failed"), tmp_path, stamp=STAMP)
    assert owned_files(tmp_path) == sorted(written)


@given(st.text(min_size=1, max_size=80))
def test_every_nvvs_document_name_is_one_glimmer_owns(node: str) -> None:
    assert format_of(file_name(node)) == "nvvs"


@given(st.text(max_size=40).filter(lambda s: not s.startswith("diag")))
def test_names_glimmer_never_writes_are_never_owned(name: str) -> None:
    fixed = {"junit.xml", "burn-in-report.html", "burnin-report.md"}
    assert (format_of(name) is None) == (name not in fixed)


def test_the_file_list_is_one_line_with_the_folder_and_a_count_per_kind(tmp_path: Path) -> None:
    written = write_reports(load_run("acceptance-failed"), tmp_path / "out", stamp=STAMP)
    line = summary(tmp_path / "out", written)
    nvvs = sum(1 for p in written if p.name.startswith("diag"))
    assert line == (
        f"{tmp_path / 'out'}/ ({len(written)} files: 1 JUnit, 1 HTML, 1 Markdown, {nvvs} NVVS)"
    )
    assert "\n" not in line
