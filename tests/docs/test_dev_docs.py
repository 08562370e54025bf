"""The contributor pages stay true to the code: every function and test they name exists.

``docs/dev/invariants.md`` says, for each invariant, which function enforces it and which test
holds it; ``CONTRIBUTING.md`` (and ``docs/dev/architecture.md`` when it exists) point at
modules, functions and tests the same way. Code moves: a renamed function or a test folded into
another leaves a page that still reads well and now sends the next engineer to nothing. So
every reference of the forms

* ``src/glimmer/<path>.py`` and ``tests/<path>.py`` — the file exists;
* ``src/glimmer/<path>.py:<name>`` (or ``:<Class>.<method>``) — the module defines ``name``
  at its top level (a def, a class or an assignment), found with :mod:`ast`, without importing;
* ``tests/<path>.py::<test>`` (or ``::<Class>::<test>``) — that test function exists;

is checked here, as is every relative link of those pages. The invariants page is also held to
its shape: each invariant names its enforcement and its tests, or says plainly that this tree
does not enforce it yet.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from md_pages import broken_links

ROOT = Path(__file__).resolve().parents[2]
INVARIANTS = ROOT / "docs" / "dev" / "invariants.md"
PAGES = sorted([*(ROOT / "docs" / "dev").glob("*.md"), ROOT / "CONTRIBUTING.md"])

# A path under src/ or tests/ ending in .py, then optionally `:name[.attr]` (a definition) or
# `::test[::test]` (a test). Not preceded by a path character, so `bench/src/x.py` or
# `../src/x.py` are not read as repository paths.
_REF = re.compile(
    r"(?<![\w/.-])(?P<path>(?:src|tests)/[\w./-]*?\.py)"
    r"(?:::(?P<test>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)?)|:(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?))?"
)
# An invariant is a level-3 heading of the invariants page; its parts are bold lead-ins.
_SECTION = re.compile(r"^### (.+)$", re.MULTILINE)
PARTS = ("**Rule.**", "**Enforced in.**", "**Prevents.**", "**Held by.**")
NOT_YET = "Not enforced in this tree yet"


@dataclass(frozen=True)
class Ref:
    """One reference found on a page."""

    page: str
    path: str
    name: str | None = None  # a definition in a src module
    test: str | None = None  # a test in a tests module

    def __str__(self) -> str:
        if self.test:
            return f"{self.path}::{self.test}"
        return f"{self.path}:{self.name}" if self.name else self.path


def refs(text: str, page: str = "") -> list[Ref]:
    """Every src/tests reference in ``text``, in order."""
    return [
        Ref(page, m.group("path"), m.group("name"), m.group("test")) for m in _REF.finditer(text)
    ]


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _assigned(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    else:
        return []
    return [t.id for t in targets if isinstance(t, ast.Name)]


def _names_in(body: list[ast.stmt]) -> dict[str, ast.stmt]:
    """Top-level names a body defines: functions, classes and assignments."""
    found: dict[str, ast.stmt] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = node
        for name in _assigned(node):
            found[name] = node
    return found


def problem(ref: Ref, root: Path = ROOT) -> str | None:
    """Why ``ref`` points at nothing, or None when it is real."""
    path = root / ref.path
    if not path.is_file():
        return f"{ref}: no file {ref.path}"
    wanted = ref.test or ref.name
    if wanted is None:
        return None
    parts = wanted.split("::") if ref.test else wanted.split(".")
    body = _tree(path).body
    for depth, part in enumerate(parts):
        node = _names_in(body).get(part)
        if node is None:
            where = ".".join(parts[:depth]) or ref.path
            return f"{ref}: {where} defines no {part}"
        if depth < len(parts) - 1:
            if not isinstance(node, ast.ClassDef):
                return f"{ref}: {part} is not a class"
            body = node.body
    if ref.test and not parts[-1].startswith("test_"):
        return f"{ref}: {parts[-1]} is not a test (pytest collects only test_* functions)"
    return None


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _page_refs(page: Path) -> list[Ref]:
    return refs(page.read_text(encoding="utf-8"), _name(page))


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_function_and_test_a_contributor_page_names_exists(page: Path) -> None:
    assert page.is_file(), f"{_name(page)} is missing"
    broken = [why for ref in _page_refs(page) if (why := problem(ref)) is not None]
    assert not broken, f"{_name(page)}: " + "; ".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_of_a_contributor_page_resolves(page: Path) -> None:
    broken = broken_links(page, ROOT)
    assert not broken, f"{_name(page)}: " + "; ".join(broken)


def sections(text: str) -> dict[str, str]:
    """Each level-3 section of the invariants page by its heading."""
    heads = list(_SECTION.finditer(text))
    return {
        h.group(1): text[h.end() : heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        for i, h in enumerate(heads)
    }


def shape_problem(heading: str, body: str) -> str | None:
    """Why one invariant's section lacks a part, an enforcement or a test; None when whole."""
    missing = [p for p in PARTS if p not in body]
    if missing:
        return f"{heading}: lacks {', '.join(missing)}"
    if NOT_YET in body:
        return None
    found = refs(body)
    if not any(r.path.startswith("src/") and r.name for r in found):
        return f"{heading}: names no src/...py:function that enforces it"
    if not any(r.test for r in found):
        return f"{heading}: names no tests/...py::test that holds it"
    return None


def test_every_invariant_says_where_it_is_enforced_and_which_test_holds_it() -> None:
    found = sections(INVARIANTS.read_text(encoding="utf-8"))
    problems = [why for h, body in found.items() if (why := shape_problem(h, body)) is not None]
    assert not problems, "; ".join(problems)
    # At least the fourteen rules of specs/burnin.md §10 and the engine's own.
    assert len(found) >= 30, f"only {len(found)} invariants on the page"


def test_the_checks_catch_a_reference_that_moved() -> None:
    # Guards the guards: a pattern that matched nothing would pass every page above.
    text = (
        "`src/glimmer/engine/persist.py:kill_condemned`, `src/glimmer/engine/nowhere.py:x`, "
        "`src/glimmer/engine/persist.py:no_such_function`, `src/glimmer/engine/cordon.py`, "
        "`tests/docs/test_dev_docs.py::test_the_checks_catch_a_reference_that_moved`, "
        "`tests/docs/test_dev_docs.py::refs`, `tests/docs/test_dev_docs.py::test_gone`, "
        "`src/glimmer/engine/reconciler.py:Engine.reconcile`, "
        "`src/glimmer/engine/reconciler.py:Engine.no_method`, ../src/glimmer/x.py"
    )
    found = refs(text)
    assert [str(r) for r in found] == [
        "src/glimmer/engine/persist.py:kill_condemned",
        "src/glimmer/engine/nowhere.py:x",
        "src/glimmer/engine/persist.py:no_such_function",
        "src/glimmer/engine/cordon.py",
        "tests/docs/test_dev_docs.py::test_the_checks_catch_a_reference_that_moved",
        "tests/docs/test_dev_docs.py::refs",
        "tests/docs/test_dev_docs.py::test_gone",
        "src/glimmer/engine/reconciler.py:Engine.reconcile",
        "src/glimmer/engine/reconciler.py:Engine.no_method",
    ]
    real = [r for r in found if problem(r) is None]
    assert [str(r) for r in real] == [
        "src/glimmer/engine/persist.py:kill_condemned",
        "src/glimmer/engine/cordon.py",
        "tests/docs/test_dev_docs.py::test_the_checks_catch_a_reference_that_moved",
        "src/glimmer/engine/reconciler.py:Engine.reconcile",
    ]
    assert "is not a test" in (problem(found[5]) or "")


def test_an_invariant_without_a_test_or_an_enforcement_is_caught() -> None:
    whole = (
        "**Rule.** r **Enforced in.** `src/glimmer/engine/persist.py:kill_condemned` "
        "**Prevents.** p **Held by.** `tests/docs/test_dev_docs.py::test_gone`"
    )
    assert shape_problem("whole", whole) is None
    assert "names no tests" in (
        shape_problem("untested", whole.split("**Held by.**")[0] + "**Held by.** nothing") or ""
    )
    assert "lacks **Prevents.**" in (
        shape_problem("short", whole.replace("**Prevents.**", "")) or ""
    )
    gap = f"**Rule.** r **Enforced in.** {NOT_YET}. **Prevents.** p **Held by.** nothing"
    assert shape_problem("gap", gap) is None
