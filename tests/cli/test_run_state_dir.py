"""``glimmer run --state-dir DIR``: the simulator CLI keeps its BurnInRun in the file-backed run
store every substrate without one of its own shares, and a name is used once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glimmer.api.run import BurnInRun
from glimmer.cli.app import main

ONE_NODE = ("--nodes", "hgx-node-0001", "--no-faults", "--profile", "smoke")


def _final(out: str) -> BurnInRun:
    return BurnInRun.model_validate(json.loads(out))


def test_the_run_is_kept_in_the_folder_as_the_verdict_it_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    assert main(["run", *ONE_NODE, "-o", "json", "--state-dir", str(state)]) == 0
    printed = _final(capsys.readouterr().out)
    kept = BurnInRun.model_validate_json((state / "default" / "smoke.json").read_text())
    assert kept.status == printed.status and kept.status is not None
    assert kept.metadata.uid == printed.metadata.uid
    assert not kept.metadata.finalizers  # torn down: what remains is the record


def test_a_second_run_of_the_same_name_is_refused_and_the_kept_one_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    assert main(["run", *ONE_NODE, "-o", "json", "--state-dir", str(state)]) == 0
    path = state / "default" / "smoke.json"
    before = path.read_bytes()
    capsys.readouterr()
    assert main(["run", *ONE_NODE, "--state-dir", str(state)]) == 2
    err = capsys.readouterr().err
    assert "--state-dir" in err and "already holds BurnInRun default/smoke (Passed)" in err
    assert str(path) in err and "Traceback" not in err
    assert path.read_bytes() == before


def test_a_state_dir_that_cannot_be_written_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert main(["run", *ONE_NODE, "--state-dir", str(blocker / "state")]) == 2
    assert "--state-dir" in capsys.readouterr().err
    assert blocker.read_text() == "not a folder"
