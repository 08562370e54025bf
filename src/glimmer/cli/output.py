"""Shared console objects and output helpers for the CLI (formatting only, no decisions)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


def print_json(data: Any) -> None:
    """Machine-readable output: plain JSON on stdout, never rich-styled."""
    print(json.dumps(data, indent=2, sort_keys=False))
