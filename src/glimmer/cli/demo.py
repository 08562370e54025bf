"""``glimmer demo``: what `make demo` shows a new user.

One line of lint over the built-in profiles, then the main job — ``glimmer run`` with no
arguments: the ``acceptance`` profile over the simulated ``ai-factory`` fleet with two planted
faults (a GPU pinned in a low P-state, a degraded NIC), live progress, the verdict table and the
findings that name both faults by node, test and metric. The run's verdict is Failed, which is
the demo working: it exits 0 then, and 1 if the run settled any other way.
"""

from __future__ import annotations

import typer

from glimmer.api.profile import BurnInProfile
from glimmer.cli.output import console
from glimmer.cli.run_cmd import EXIT_CODES, RunOutput, run_main
from glimmer.cli.run_inputs import RunFlags
from glimmer.contract.vocab import Phase
from glimmer.plan.builtin import load_builtin
from glimmer.plan.lint import lint_loaded


def demo() -> None:
    """Burn in the simulated ai-factory fleet and find the two faults planted in it."""
    loaded = load_builtin()
    findings = lint_loaded(loaded)
    profiles = sum(1 for item in loaded if isinstance(item.obj, BurnInProfile))
    if findings:
        for f in findings:
            console.print(f"lint: {f.location.obj} {f.test}: {f.problem}", soft_wrap=True)
        raise typer.Exit(1)
    console.print(
        f"lint: {profiles} built-in profiles and {len(loaded) - profiles} tests, every gate sound"
    )
    console.print()
    code = run_main(RunFlags(), output=RunOutput.TABLE, dry=False, backend="sim")
    console.print()
    if code == EXIT_CODES[Phase.FAILED]:
        console.print(
            "demo: the planted faults were found — `glimmer run` exits 1 (Failed) on this run, "
            "as it must; `glimmer run --no-faults` passes.",
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(0)
    console.print(
        f"demo: expected the planted faults to fail the run, but `glimmer run` exited {code}",
        markup=False,
    )
    raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``glimmer demo`` to the app."""
    app.command("demo")(demo)
