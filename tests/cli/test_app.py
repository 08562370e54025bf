"""The command surface: --version, --help everywhere, exit codes without tracebacks."""

from typing import Any

import pytest
import typer

from glimmer import __version__
from glimmer.cli.app import app, main
from glimmer.cli.conventions import DEFAULT_SEED, FILE_FLAGS, OUTPUT_FLAGS
from glimmer.cli.help_style import styled


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


def _options() -> list[tuple[str, Any]]:
    """Every option of every command, with the command's path."""
    found: list[tuple[str, Any]] = []

    def walk(command: Any, prefix: str) -> None:
        for param in command.params:
            if getattr(param, "param_type_name", "") == "option":
                found.append((prefix, param))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{prefix} {name}".strip())

    walk(styled(app), "")
    return found


def test_dash_f_is_always_file_and_dash_o_always_output() -> None:
    meaning = dict(zip(("-f", "-o"), (FILE_FLAGS[0], OUTPUT_FLAGS[0]), strict=True))
    wrong = [
        f"glimmer {path}: {short} is {param.opts}"
        for path, param in _options()
        for short, long in meaning.items()
        if short in param.opts and long not in param.opts
    ]
    assert not wrong


def test_output_always_names_a_format_never_a_path() -> None:
    # `-o json` must never write a file called json: --output is a choice of formats.
    paths = [
        f"glimmer {path}: {param.opts}"
        for path, param in _options()
        if OUTPUT_FLAGS[0] in param.opts and "|" not in (param.metavar or "")
    ]
    assert not paths


def test_every_seed_flag_defaults_to_the_one_seed() -> None:
    seeds = {path: param.default for path, param in _options() if "--seed" in param.opts}
    assert {"run", "schedule run", "certify run"} <= set(seeds)
    assert set(seeds.values()) == {DEFAULT_SEED}


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["nope"], "error: glimmer: No such command 'nope'."),
        (["run", "-o", "xml"], "error: glimmer run: Invalid value for '--output' / '-o'"),
        (["run", "--max-concurrent", "abc"], "error: glimmer run: Invalid value for"),
        (["fleet", "serve"], "error: glimmer fleet serve: Missing option '--fleet'."),
        (["run", "--no-such-flag"], "error: glimmer run: No such option: --no-such-flag"),
    ],
)
def test_a_usage_error_is_one_line_naming_the_command_and_exit_2(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    out = capsys.readouterr()
    assert out.out == ""
    (line,) = out.err.splitlines()
    assert line.startswith(says) and line.endswith("-h')")


def test_a_group_without_a_subcommand_shows_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet"]) == 2
    out = capsys.readouterr()
    assert "Usage: glimmer fleet" in out.out and "validate" in out.out and out.err == ""
