"""How every command's options read in ``--help`` (plain metavars, ``-h``), and how a usage
error reads: one line, like every other bad input.

Typer derives a metavar from the Python annotation (``<bool>``, ``<list[str]>``, ``<str>``),
which tells a user about our code, not about what to type. Here every option without a metavar
of its own gets one in the words of the command line: nothing for an on/off flag, the choices
for an enum, ``N`` for a number and the option's own name (``--fleet`` -> ``FLEET``) otherwise.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import typer

# Click copies these from the root context into every sub-context, so one entry covers all
# commands.
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}
NUMBER_METAVAR = "N"


# Typer 0.2x ships its own copy of Click (typer._click) and describes a parameter's type by a
# type descriptor; older releases use Click's ParamType. Both are read by what they have, not
# by class, and a test keeps every help page free of ``<type>`` metavars whichever is installed.
NUMBER_TYPES = frozenset({"integer", "float", "int"})


def _choices(option: Any) -> list[str]:
    desc = getattr(option, "type_descriptor", None)
    if desc is not None:
        found = desc.choices if desc.is_choice else None
    else:
        found = getattr(getattr(option, "type", None), "choices", None)
    return [str(getattr(c, "value", c)) for c in found or ()]


def _is_number(option: Any) -> bool:
    desc = getattr(option, "type_descriptor", None)
    if desc is not None:
        return desc.annotation in (int, float)
    return getattr(getattr(option, "type", None), "name", "") in NUMBER_TYPES


def _metavar(option: Any) -> str:
    if getattr(option, "is_flag", False) or getattr(option, "count", False):
        return ""
    choices = _choices(option)
    if choices:
        return "|".join(choices)
    if _is_number(option):
        return NUMBER_METAVAR
    longest: str = max(option.opts, key=len)
    return longest.lstrip("-").upper().replace("-", "_")


def plain_metavars(command: Any) -> None:
    """Give every option of ``command`` and of its subcommands a command-line metavar."""
    for param in command.params:
        kind = getattr(param, "param_type_name", "")
        if kind == "option" and param.metavar is None:
            param.metavar = _metavar(param)
        elif kind == "argument" and hasattr(param, "display_type_rich"):
            # An argument's name (RUN, PATH) already says what to type; typer would add its
            # Python type beside it.
            param.display_type_rich = _no_type
    _plain_help_option(command)
    subs = getattr(command, "commands", {})
    # A lazy group (lazy_group.LazyCommands) styles each command as it loads it; walking it
    # here would load every command module for any one command.
    if not getattr(subs, "lazy", False):
        for sub in subs.values():
            plain_metavars(sub)


def _no_type(ctx: Any) -> None:
    return None


def _plain_help_option(command: Any) -> None:
    # The -h/--help option is made per invocation rather than listed in ``params``.
    make = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = make(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option


def is_usage_error(error: BaseException) -> bool:
    """A Click error about the command line (unknown option, missing value, bad choice)."""
    return hasattr(error, "format_message") and isinstance(getattr(error, "exit_code", None), int)


def shows_help(error: BaseException) -> bool:
    """A group called without a subcommand: its help is the answer, not an error line."""
    return type(error).__name__ == "NoArgsIsHelpError"


def usage_line(error: Any) -> str:
    """``error: glimmer fleet serve: Missing option '--fleet'. (see 'glimmer fleet serve -h')``:
    Click's own message on one line, with the command it is about."""
    ctx = getattr(error, "ctx", None)
    where = ctx.command_path if ctx is not None else "glimmer"
    message = " ".join(str(error.format_message()).split())
    return f"error: {where}: {message} (see '{where} -h')"


@cache
def styled(app: typer.Typer) -> Any:
    """The Click command of ``app`` with plain metavars (built once per process)."""
    command = typer.main.get_command(app)
    plain_metavars(command)
    return command
