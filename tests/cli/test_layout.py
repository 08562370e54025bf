"""Tables on terminals narrower than they are: records instead of cut or broken cells."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.table import Table

from glimmer.cli import fleet as fleet_cmd
from glimmer.cli import layout

ANSI = re.compile(r"\x1b\[[0-9;]*m")
GATES = "xidEvents == 0; pcieReplayErrors == 0; nicLinkDownEvents == 0; eccErrors == 0"


def _table() -> Table:
    table = Table(title="Plan")
    for column in ("test", "kind", "scope", "duration", "gates"):
        table.add_column(column)
    table.add_row("host-fault-counters", "host-health", "Node", "30s", GATES)
    table.add_row("sustained-clock", "clockprobe", "Node", "300s", "sustainedClockPct >= 70")
    return table


def _screen(width: int, *, terminal: bool = True) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, force_terminal=terminal, no_color=True), out


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\w=<>.:/-]+", ANSI.sub("", text)))


def _one_row(text: str) -> bool:
    """The table form: a test's name and its kind on the same line."""
    return any(
        "host-fault-counters" in line and "host-health" in line for line in text.splitlines()
    )


def test_a_table_that_fits_is_printed_as_a_table() -> None:
    console, out = _screen(200)
    layout.print_fitted(console, _table())
    assert _one_row(ANSI.sub("", out.getvalue()))


@pytest.mark.parametrize("width", [50, 80])
def test_a_table_wider_than_the_terminal_becomes_records_with_every_word_whole(
    width: int,
) -> None:
    console, out = _screen(width)
    layout.print_fitted(console, _table())
    text = ANSI.sub("", out.getvalue())
    assert "…" not in text
    assert all(len(line.rstrip()) <= width for line in text.splitlines())
    for word in ("host-fault-counters", "host-health", "nicLinkDownEvents", "sustainedClockPct"):
        assert word in _words(text)
    assert re.search(r"^ +duration +300s", text, re.M), "every other cell is labelled"


def test_off_a_terminal_a_table_is_laid_out_wide_not_as_records() -> None:
    console, out = _screen(80, terminal=False)
    layout.print_fitted(console, _table())
    assert _one_row(out.getvalue())


def test_fleet_show_on_an_80_column_terminal_cuts_no_cell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    console, out = _screen(80)
    monkeypatch.setattr(fleet_cmd, "console", console)
    fleet_cmd.show(fleet="ai-factory", nodes=True)
    fleet_cmd.topology(fleet="ai-factory")
    text = ANSI.sub("", out.getvalue())
    assert "…" not in text
    assert "h100_sxm_80gb" in _words(text) and "rack:site-a/pcie-a" in _words(text)
    assert "domain:site-a/hgx-a/hgx/hgx-node-0001/baseboard" in _words(text)
