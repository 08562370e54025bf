"""Where wide tables go, and what a table becomes when the terminal is narrower than it.

Off a terminal (a pipe, a file, CI logs) nothing re-wraps a table for the reader, and folding
metric names at 80 columns makes them unreadable; such output is laid out ``PIPE_WIDTH`` wide.
On a terminal narrower than a table's natural width, rich would cut cells to ``…`` or break
words in two to make it fit; the same rows are then shown as records instead (the first cell
as a heading, then one ``column  value`` line per other cell), where values wrap between words
and nothing is cut.
"""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

PIPE_WIDTH = 140
# A page wide enough that no table of ours is clamped to it when it is measured.
UNBOUNDED = 10_000


def wide(console: Console) -> Console:
    """``console`` on a terminal; otherwise a plain console on the same file, at least
    ``PIPE_WIDTH`` columns wide."""
    if console.is_terminal or console.width >= PIPE_WIDTH:
        return console
    return Console(file=console.file, width=PIPE_WIDTH, highlight=False, no_color=True)


def fits(console: Console, table: Table) -> bool:
    """Whether ``table`` fits ``console`` at its natural width (no cell cut or folded)."""
    options = console.options.update_width(UNBOUNDED)
    return Measurement.get(console, options, table).maximum <= console.width


def records(table: Table) -> Group:
    """The rows of ``table`` as records: the first cell a heading, the others labelled."""
    columns = table.columns
    headers = [_text(c.header, "") for c in columns]
    cells = [list(c.cells) for c in columns]
    parts: list[RenderableType] = []
    if table.title:
        parts.append(Text(str(table.title), style="bold"))
    for row in range(len(cells[0]) if cells else 0):
        parts.append(Text.assemble(Text(" "), _text(cells[0][row], "bold")))
        grid = Table.grid(padding=(0, 2))
        grid.add_column(no_wrap=True, style="dim")
        grid.add_column(overflow="fold")
        for col in range(1, len(columns)):
            grid.add_row(Text.assemble(Text("   "), headers[col]), cells[col][row])
        parts.append(grid)
    if table.caption:
        parts.append(Text(str(table.caption)))
    return Group(*parts)


def _text(cell: RenderableType, style: str) -> Text:
    if isinstance(cell, Text):
        return Text.assemble(cell, style=style)
    if isinstance(cell, str):
        return Text.from_markup(cell, style=style)
    return Text(str(cell), style=style)


def print_fitted(console: Console, table: Table) -> None:
    """Print ``table`` as it is when it fits (off a terminal: ``PIPE_WIDTH``), else as records."""
    out = wide(console)
    out.print(table if fits(out, table) else records(table))
