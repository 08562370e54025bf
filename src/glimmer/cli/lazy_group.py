"""A command group that knows its commands by name and one-line help, and imports a command's
module only when that command is resolved.

``glimmer --help`` lists every command from a small table without importing one, and
``glimmer lint`` imports lint's module and what it uses, not the simulator and certification
that other commands need. A resolved command is the one the module's own ``register(app)``
adds, built by Typer exactly as an eagerly built app would build it, so its options, help and
exit codes do not depend on how it was found.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup

from glimmer.cli.help_style import plain_metavars


@dataclass(frozen=True)
class CommandRef:
    """One command of the group: its name, the module whose ``register(app)`` adds it, and the
    first paragraph of its help (what the group's command list shows)."""

    name: str
    module: str
    help: str


@cache
def _registered(module: str) -> typer.Typer:
    # A command module registers onto module-level sub-apps as well as onto the app it is
    # given, so each module registers once per process, as it did when the app was eager.
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    importlib.import_module(module).register(app)
    return app


class LazyCommands(Mapping[str, Any]):
    """The group's ``commands`` mapping: every name known from the table, a command built
    (and given plain metavars) the first time it is looked up."""

    # Read by help_style.plain_metavars: walking this mapping would load every command.
    lazy: ClassVar[bool] = True

    def __init__(self, refs: Sequence[CommandRef]) -> None:
        self._refs = {ref.name: ref for ref in refs}
        self._loaded: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        found = self._loaded.get(name)
        if found is None:
            ref = self._refs[name]
            # get_group, not get_command: a module that registers one command would
            # otherwise come back as that bare command rather than a group holding it.
            built = typer.main.get_group(_registered(ref.module)).commands
            for each, command in built.items():
                if each in self._refs and each not in self._loaded:
                    plain_metavars(command)
                    self._loaded[each] = command
            found = self._loaded[name]
        return found

    def __contains__(self, name: object) -> bool:
        # Mapping's own __contains__ looks the item up, which would load it.
        return name in self._refs

    def __iter__(self) -> Iterator[str]:
        return iter(self._refs)

    def __len__(self) -> int:
        return len(self._refs)

    def listed(self, name: str) -> Any:
        """What the command list shows for ``name``: the command if it is loaded already,
        else a stand-in carrying its name and help, so listing loads nothing."""
        loaded = self._loaded.get(name)
        if loaded is not None:
            return loaded
        ref = self._refs[name]
        return TyperCommand(name=ref.name, help=ref.help)


class LazyGroup(TyperGroup):
    """A Typer group whose commands come from :attr:`refs`, each loaded when resolved."""

    refs: ClassVar[Sequence[CommandRef]] = ()

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands: LazyCommands = LazyCommands(self.refs)  # type: ignore[assignment]
        self._listing = False

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands:
            return None
        if self._listing:
            return self.commands.listed(cmd_name)
        return self.commands[cmd_name]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # The help page lists every command by name and help alone: nothing is loaded for it.
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def lazy_group(refs: Sequence[CommandRef]) -> type[LazyGroup]:
    """The group class (Typer's ``cls=``) whose commands are ``refs``, in that order."""
    return type("GlimmerGroup", (LazyGroup,), {"refs": tuple(refs)})
