"""Every file glimmer reads is refused at once when it is over its byte budget, the budget named."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from glimmer.api.budget import BUDGETS, MiB, budget, check_size, read_bounded, read_text
from glimmer.api.load import collect_paths
from glimmer.cli.app import main
from glimmer.errors import InputError
from glimmer.fleet.load import read_fleet
from glimmer.sinks.signing import SigningSecret


def _sparse(path: Path, size: int) -> Path:
    # A sparse file: as big as a hostile input to stat, but nothing is written to disk.
    with path.open("wb") as f:
        f.truncate(size)
    return path


def test_every_budget_holds_what_glimmer_itself_writes() -> None:
    # A 10,000-node smoke run writes a 152 MB BurnInRun JSON; a 100,000-GPU Fleet is ~2.3 MB.
    assert budget("resource-json").max_bytes >= 3 * 152_000_000
    assert budget("fleet").max_bytes >= 4 * 2_300_000
    assert all(b.max_bytes > 0 and b.what for b in BUDGETS.values())


def test_a_fleet_file_over_its_budget_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "huge.yaml", 52_400_000)
    with pytest.raises(InputError) as caught:
        read_fleet(str(path))
    assert str(caught.value) == f"{path}: file is 52.4 MB, over the 16 MiB budget for a Fleet"


def test_a_json_resource_over_its_budget_is_refused_naming_the_budget(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "run.json", 512 * MiB + 1)
    loaded, (error,) = collect_paths([str(path)])
    assert loaded == []
    assert error.message == "file is 536.9 MB, over the 512 MiB budget for a JSON resource file"


def test_a_yaml_resource_has_a_lower_budget_than_json(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "big.yaml", 64 * MiB + 1)
    _, (error,) = collect_paths([str(path)])
    assert error.message.endswith("over the 64 MiB budget for a YAML resource file")


def test_the_command_line_refuses_an_oversized_fleet_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _sparse(tmp_path / "fleet.yaml", 20 * MiB)
    assert main(["fleet", "validate", "--fleet", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {path}: file is 21.0 MB, over the 16 MiB budget for a Fleet\n"


def test_a_stream_longer_than_its_budget_is_cut_and_refused() -> None:
    limit = budget("secret")
    with pytest.raises(InputError) as caught:
        read_bounded(io.BytesIO(b"x" * (limit.max_bytes + 10)), limit, "<stdin>")
    assert "over the 64 KiB budget for a secret" in str(caught.value)
    assert read_bounded(io.BytesIO(b"x" * limit.max_bytes), limit, "s") == b"x" * limit.max_bytes


def test_a_binary_file_is_refused_as_not_utf8_naming_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_bytes(b"apiVersion: x\n\xff\xfe")
    with pytest.raises(InputError) as caught:
        read_text(path, "fleet")
    assert str(caught.value) == f"{path}: not a UTF-8 text file (byte 14 is not UTF-8)"


def test_a_folder_given_as_a_fleet_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        read_fleet(str(tmp_path) + "/")
    assert caught.value.message == "is a folder, not a file"


def test_a_file_read_by_another_library_is_size_checked_without_reading(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "ca.pem", 5 * MiB)
    with pytest.raises(InputError) as caught:
        check_size(path, "ca-bundle")
    assert caught.value.message == "file is 5.2 MB, over the 4 MiB budget for a CA bundle"
    check_size(_sparse(tmp_path / "small.pem", 1024), "ca-bundle")  # within: no error


def test_an_oversized_certification_result_is_refused_before_it_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _sparse(tmp_path / "result.json", 65 * MiB)
    assert main(["certify", "report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {path}: file is 68.2 MB, over the 64 MiB budget for a certification result\n"
    )


def test_an_oversized_signing_secret_is_refused_naming_the_budget(tmp_path: Path) -> None:
    path = _sparse(tmp_path / "secret", 1 * MiB)
    with pytest.raises(InputError) as caught:
        SigningSecret.from_file(path)
    assert caught.value.message == "file is 1.0 MB, over the 64 KiB budget for a secret"


def test_a_path_holding_a_nul_is_bad_input_not_a_value_error() -> None:
    # argv cannot carry a NUL, but a Python caller or a path built from a document can.
    with pytest.raises(InputError) as caught:
        check_size("ca\x00.pem", "ca-bundle")
    assert caught.value.message == "a path cannot hold a NUL character"
    assert str(caught.value) == "'ca\\x00.pem': a path cannot hold a NUL character"
    with pytest.raises(InputError) as caught:
        read_text("fleet\x00.yaml", "fleet")
    assert caught.value.message == "a path cannot hold a NUL character"
