"""The verdict table at the end of ``glimmer run`` on terminals of every width."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from glimmer.api.load import load_paths
from glimmer.api.run import BurnInRun
from glimmer.cli.verdict_table import render_verdict

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


def _run(name: str) -> BurnInRun:
    (item,) = load_paths([str(RUNS / name)])
    assert isinstance(item.obj, BurnInRun)
    return item.obj


ANSI = re.compile(r"\x1b\[[0-9;]*m")


class _Screen(io.StringIO):
    """What a terminal of the given width shows, without its escape codes."""

    def getvalue(self) -> str:
        return ANSI.sub("", super().getvalue())


def _terminal(width: int) -> tuple[Console, _Screen]:
    out = _Screen()
    return Console(file=out, width=width, force_terminal=True, no_color=True), out


def _words(run: BurnInRun) -> set[str]:
    """Test and metric names the table may show: none of them may be cut in two."""
    names = {r.name for r in run.status.results or ()} if run.status else set()
    for result in (run.status.results or ()) if run.status else ():
        names.update(v.metric for v in result.violations or ())
    return names


@pytest.mark.parametrize("name", ["acceptance-failed.json", "mixed-outcomes.json"])
@pytest.mark.parametrize("width", [60, 80, 100])
def test_a_narrow_terminal_never_splits_a_test_or_metric_name(name: str, width: int) -> None:
    run = _run(name)
    console, out = _terminal(width)
    render_verdict(console, run)
    table = out.getvalue().split("Findings")[0]
    lines = table.splitlines()
    assert all(len(line.rstrip()) <= width for line in lines)
    shown = set(re.findall(r"[A-Za-z][\w-]*", table))
    for word in _words(run):
        # A name the table shows is shown whole: no prefix of it ends a line alone.
        fragments = {w for w in shown if w != word and len(w) >= 3 and word.startswith(w)}
        assert not (fragments - _words(run)), (word, fragments)


def test_a_wide_terminal_shows_the_node_by_test_matrix() -> None:
    run = _run("acceptance-failed.json")
    console, out = _terminal(250)
    render_verdict(console, run)
    header = next(line for line in out.getvalue().splitlines() if line.lstrip().startswith("node"))
    tests = list(dict.fromkeys(r.name for r in run.status.results or ())) if run.status else []
    assert tests and all(test in header for test in tests)


def test_the_narrow_form_names_each_failed_test_with_its_reading() -> None:
    run = _run("acceptance-failed.json")
    console, out = _terminal(80)
    render_verdict(console, run)
    text = out.getvalue().split("Findings")[0]
    assert "tests that did not pass" in text
    failed = (
        [r for r in (run.status.results or ()) if r.phase.value == "Failed"] if run.status else []
    )
    assert failed
    for result in failed:
        assert f"{result.name}: Failed" in text
