"""The user docs stay true to the tree: links resolve and named commands exist.

Docs rot silently: a renamed page, heading or command leaves a page that still reads well and
now misleads. These checks are cheap, so they run with the rest of the suite. They do not run
the examples (their output moves with the simulator); they check that what a page names is
real: every relative link in ``docs/*.md`` and ``README.md`` points at an existing file (and,
for a ``#fragment`` into a Markdown page, at an existing heading), and every ``glimmer``
invocation in a fenced block of ``docs/`` names a command of the real CLI.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer.main
from md_pages import broken_links, links, slug, split

from glimmer.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
DOC_PAGES = sorted(DOCS.glob("*.md"))
PAGES = [*DOC_PAGES, ROOT / "README.md"]

# `glimmer` as a program name: at a line start or after a blank, a prompt, a backtick, a
# parenthesis or a path ("/.venv/bin/glimmer"), and followed by an argument. Module paths
# (glimmer.cli), image names (glimmer-burnin) and metric names (glimmer_node_…) never match.
_INVOCATION = re.compile(r"(?<![^\s`$(/])glimmer[ \t]+(.*)$")
# Where a shell command line stops being glimmer's arguments.
_ARGS_END = re.compile(r"[|;&<>`#)]")
# What glimmer prints about itself ("error: glimmer run: ...") is output, not an invocation.
_OUTPUT_LINE = re.compile(r"^\s*(error|warning):")


def invocations(page: Path) -> list[list[str]]:
    """The arguments of every ``glimmer`` invocation in the fenced blocks of ``page``."""
    found: list[list[str]] = []
    for line in split(page)[1]:
        if _OUTPUT_LINE.match(line):
            continue
        for match in _INVOCATION.finditer(line):
            args = _ARGS_END.split(match.group(1), maxsplit=1)[0].split()
            if args:
                found.append(args)
    return found


def command_tree() -> dict[str, set[str]]:
    """Each top-level command of the real CLI, with its sub-command names (empty if none).

    Groups are recognised by their ``commands`` mapping rather than by class: typer ships its
    own copy of click, so an ``isinstance`` against the click package would see no group.
    """
    root = typer.main.get_command(app)
    commands: dict[str, object] = getattr(root, "commands", {})
    assert commands, "the glimmer app has no commands?"
    return {name: set(getattr(cmd, "commands", {})) for name, cmd in commands.items()}


def unknown_command(args: list[str], tree: dict[str, set[str]]) -> str | None:
    """Why ``glimmer <args>`` does not name a real command, or None when it does.

    Only the command path is checked: the first word, and for a group the next one, unless it
    is an option (``glimmer --version``, ``glimmer fleet --help`` name no command to check).
    """
    first = args[0]
    if first.startswith("-"):
        return None
    if first not in tree:
        return f"glimmer {first}: no such command (commands: {', '.join(sorted(tree))})"
    subs = tree[first]
    if subs and len(args) > 1 and not args[1].startswith("-") and args[1] not in subs:
        return f"glimmer {first} {args[1]}: no such command (has: {', '.join(sorted(subs))})"
    return None


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_resolves(page: Path) -> None:
    broken = broken_links(page, ROOT)
    assert not broken, f"{_name(page)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", DOC_PAGES, ids=_name)
def test_every_glimmer_command_in_an_example_exists(page: Path) -> None:
    tree = command_tree()
    problems = [
        why for args in invocations(page) if (why := unknown_command(args, tree)) is not None
    ]
    assert not problems, f"{_name(page)}: " + "; ".join(problems)


def test_the_checks_see_the_docs() -> None:
    # Guards the guards: a pattern that silently matched nothing would pass every page above.
    named = {
        " ".join(args[:2]) if args[0] == "fleet" else args[0]
        for page in DOC_PAGES
        for args in invocations(page)
    }
    assert {"lint", "validate", "fleet telemetry", "fleet serve", "fleet generate"} <= named
    assert "concepts.md" in links(DOCS / "README.md")


def test_a_misnamed_command_or_anchor_is_caught() -> None:
    tree = command_tree()
    assert unknown_command(["fleet", "simulate"], tree) is not None
    assert unknown_command(["no-such-command"], tree) is not None
    assert unknown_command(["fleet", "--help"], tree) is None
    assert unknown_command(["--version"], tree) is None
    assert slug("Evaluation order, violation kinds and causes") == (
        "evaluation-order-violation-kinds-and-causes"
    )
    assert slug("`glimmer lint`") == "glimmer-lint"
