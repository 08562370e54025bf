"""The command surface: --version, --help everywhere, exit codes without tracebacks."""

from typing import Any

import pytest
import typer

from glimmer import __version__
from glimmer.cli.app import app, main


def _command_paths() -> list[list[str]]:
    root = typer.main.get_command(app)
    paths: list[list[str]] = []

    def walk(command: Any, prefix: list[str]) -> None:
        paths.append(prefix)
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, [*prefix, name])

    walk(root, [])
    return paths


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"glimmer {__version__}"


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p) or "glimmer")
def test_every_command_answers_help(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    assert "Usage" in capsys.readouterr().out


def test_the_issue_2_commands_exist() -> None:
    names = {" ".join(p) for p in _command_paths()}
    assert {"validate", "lint", "metrics", "crds"} <= names


def test_an_unknown_command_is_a_usage_error_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p) or "glimmer")
def test_every_command_answers_dash_h_like_help(
    path: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*path, "-h"]) == 0
    short = capsys.readouterr().out
    assert main([*path, "--help"]) == 0
    assert short == capsys.readouterr().out


@pytest.mark.parametrize("path", _command_paths(), ids=lambda p: " ".join(p) or "glimmer")
def test_help_shows_what_to_type_not_python_types(
    path: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    for python_type in ("<bool>", "<str>", "<int>", "<float>", "<list[", "<path>"):
        assert python_type not in out
