"""Where wide tables go: the terminal as it is, or a wider page when stdout is not a terminal.

Off a terminal (a pipe, a file, CI logs) nothing re-wraps a table for the reader, and folding
metric names at 80 columns makes them unreadable; such output is laid out ``PIPE_WIDTH`` wide.
"""

from __future__ import annotations

from rich.console import Console

PIPE_WIDTH = 140


def wide(console: Console) -> Console:
    """``console`` on a terminal; otherwise a plain console on the same file, at least
    ``PIPE_WIDTH`` columns wide."""
    if console.is_terminal or console.width >= PIPE_WIDTH:
        return console
    return Console(file=console.file, width=PIPE_WIDTH, highlight=False, no_color=True)
