"""``glimmer demo``: what `make demo` shows a new user.

Until the run engine lands, the demo lints the built-in profiles and prints each one's plan.
"""

from __future__ import annotations

import typer
from rich.table import Table

from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTest, BurnInTestSpec
from glimmer.cli.output import console
from glimmer.plan.builtin import builtin_profiles_dir, load_builtin
from glimmer.plan.lint import lint_loaded
from glimmer.plan.summary import summarize_profile, unit_seconds


def _duration(seconds: int) -> str:
    if seconds == 0:
        return "burst"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}h" if hours else ""
    text += f"{minutes}m" if minutes else ""
    text += f"{secs}s" if secs or not text else ""
    return text


def demo() -> None:
    """Lint the built-in profiles and show what each would run."""
    loaded = load_builtin()
    findings = lint_loaded(loaded)
    console.print(f"[bold]Built-in profiles[/bold] ({builtin_profiles_dir()})")
    if findings:
        for f in findings:
            console.print(f"  {f.location.obj} {f.test}: {f.problem}", soft_wrap=True)
    else:
        console.print(f"  lint: {len(loaded)} object(s), every gate sound")
    tests: dict[str, BurnInTestSpec] = {
        i.name: i.obj.spec for i in loaded if isinstance(i.obj, BurnInTest)
    }
    for item in loaded:
        if not isinstance(item.obj, BurnInProfile):
            continue
        lines = summarize_profile(item.obj, tests)
        table = Table(title=f"profile {item.name}", title_justify="left")
        for column in ("test", "kind", "scope", "duration", "gates", "required"):
            table.add_column(column, no_wrap=column == "test")
        for line in lines:
            duration = _duration(line.duration_seconds)
            if line.segments:
                duration += f" ({line.segments} segments)"
            if line.repeats > 1:
                duration += f" x{line.repeats}"
            table.add_row(
                line.name,
                line.kind,
                line.scope,
                duration,
                str(line.gates),
                "yes" if line.required else "no",
            )
        console.print(table)
        console.print(f"  budget per unit: {_duration(unit_seconds(lines))}\n")
    raise typer.Exit(1 if findings else 0)


def register(app: typer.Typer) -> None:
    """Add ``glimmer demo`` to the app."""
    app.command("demo")(demo)
