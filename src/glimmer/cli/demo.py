"""``glimmer demo``: what `make demo` shows a new user."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo() -> None:
        """Show the product on the built-in simulated fleet."""
        typer.echo("glimmer demo: under construction")
