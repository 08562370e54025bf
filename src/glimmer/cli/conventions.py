"""What a flag means is the same in every glimmer command.

``-f`` is always ``--file`` (resources to read) and ``-o`` always ``--output`` (the format
printed); a path to write to has a flag of its own (``--out FILE``, ``--output-dir``/``-d``),
so ``-o json`` never creates a file called ``json`` and ``-f`` never names a format. Every
command that simulates draws its noise from one default seed, so ``glimmer run``,
``glimmer schedule run`` and ``glimmer certify run`` of the same fleet tell the same story
unless a seed is given. tests/cli/test_app.py holds every command to this.
"""

from __future__ import annotations

from typing import Annotated

import typer

DEFAULT_SEED = 7
FILE_FLAGS = ("--file", "-f")
OUTPUT_FLAGS = ("--output", "-o")

SeedOpt = Annotated[
    int,
    typer.Option(
        "--seed", help="Seed of the simulator's measurement noise: the same seed, the same run."
    ),
]
