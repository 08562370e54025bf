"""Start-up: a command imports what it uses; --version and --help import no command module.

Each check runs a fresh interpreter (this test process has imported everything already) and
reads its ``sys.modules``; none measures wall time.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from typing import Any

import pytest
import typer

from glimmer.cli import app as app_module
from glimmer.cli.app import COMMANDS
from glimmer.cli.lazy_group import LazyCommands, _registered

HEAVY = ("glimmer.sim", "glimmer.certify", "glimmer.backends.sim", "glimmer.engine")

_PROBE = """
import json, sys
from glimmer.cli.app import main
code = main({argv!r})
print("\\n" + json.dumps({{"code": code, "modules": sorted(sys.modules)}}))
"""


def _modules_after(argv: list[str]) -> tuple[int, list[str]]:
    """The exit code and the imported module names of ``glimmer <argv>`` in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout.rstrip().rsplit("\n", 1)[-1])
    return found["code"], found["modules"]


def _loaded(modules: list[str], package: str) -> list[str]:
    return [m for m in modules if m == package or m.startswith(package + ".")]


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"], []], ids=repr)
def test_version_and_help_import_no_simulator_certification_or_engine(argv: list[str]) -> None:
    code, modules = _modules_after(argv)
    assert code == (2 if not argv else 0)
    assert {pkg: _loaded(modules, pkg) for pkg in HEAVY} == {pkg: [] for pkg in HEAVY}


@pytest.mark.parametrize("argv", [["--version"], ["--help"]], ids=repr)
def test_version_and_help_import_no_command_module(argv: list[str]) -> None:
    _, modules = _modules_after(argv)
    commands = {f"glimmer.cli.{module}" for _, module, _ in COMMANDS}
    assert sorted(commands & set(modules)) == []


def test_version_imports_neither_typer_nor_rich() -> None:
    _, modules = _modules_after(["--version"])
    assert _loaded(modules, "typer") == [] and _loaded(modules, "rich") == []


def test_one_commands_help_loads_that_command_and_no_other() -> None:
    _, modules = _modules_after(["metrics", "--help"])
    assert "glimmer.cli.metrics_cmd" in modules
    others = {f"glimmer.cli.{module}" for name, module, _ in COMMANDS if name != "metrics"}
    assert sorted(others & set(modules)) == []


@pytest.mark.parametrize(
    "argv", [["lint", "--help"], ["validate", "--help"], ["fleet", "--help"]], ids=repr
)
def test_commands_that_read_files_import_no_simulator_engine_or_certification(
    argv: list[str],
) -> None:
    code, modules = _modules_after(argv)
    assert code == 0
    assert {pkg: _loaded(modules, pkg) for pkg in HEAVY} == {pkg: [] for pkg in HEAVY}


def _eager_root() -> Any:
    return typer.main.get_command(app_module.app)


def test_the_command_table_is_what_the_modules_register() -> None:
    # Every name in the table resolves to a command of the module it names, and each module
    # registers no command the table leaves out (it would be unreachable).
    by_module: dict[str, set[str]] = {}
    for name, module, _ in COMMANDS:
        by_module.setdefault(module, set()).add(name)
    for module, names in by_module.items():
        built = typer.main.get_group(_registered(f"glimmer.cli.{module}")).commands
        assert set(built) == names, module


def test_the_table_help_is_each_commands_first_paragraph() -> None:
    commands = _eager_root().commands
    table = {name: text for name, _, text in COMMANDS}
    shown = {name: inspect.cleandoc(commands[name].help or "").split("\n\n")[0] for name in table}
    assert shown == table


def test_the_root_help_lists_the_same_with_commands_loaded_or_not(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A fresh root has loaded nothing: its listing comes from the table's stand-ins. Loading
    # every command must not change a character of it.
    root = _eager_root()
    assert isinstance(root.commands, LazyCommands)
    ctx = typer.Context(root, info_name="glimmer")
    root.get_help(ctx)
    from_table = capsys.readouterr().out
    assert all(root.commands[name].name == name for name in root.commands)
    root.get_help(ctx)
    from_commands = capsys.readouterr().out
    assert "fingerprint" in from_table and from_commands == from_table


def test_an_unknown_command_is_not_in_the_lazy_mapping() -> None:
    root = _eager_root()
    assert "no-such-command" not in root.commands
    assert root.get_command(None, "no-such-command") is None
