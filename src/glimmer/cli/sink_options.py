"""The sink flags a command that delivers envelopes takes (``glimmer run``, ``glimmer merge``),
declared once so their names, metavars and help cannot drift apart. ``--sink`` itself says
what is delivered, so each command declares its own."""

from __future__ import annotations

from typing import Annotated

import typer

from glimmer.cli.run_inputs import DEFAULT_SINK_STATE

SinkState = Annotated[
    str | None,
    typer.Option(
        "--sink-state",
        metavar="DIR",
        help=f"Where undelivered envelopes wait for a re-send (default ./{DEFAULT_SINK_STATE}).",
    ),
]
SinkSecretFile = Annotated[
    str | None,
    typer.Option(
        "--sink-secret-file",
        metavar="PATH",
        help="Sign webhook bodies (X-Glimmer-Signature) with the secret in PATH.",
    ),
]
SinkSecretEnv = Annotated[
    str | None,
    typer.Option(
        "--sink-secret-env",
        metavar="NAME",
        help="Sign webhook bodies with the secret in environment variable NAME.",
    ),
]
SinkCa = Annotated[
    str | None,
    typer.Option(
        "--sink-ca", metavar="PATH", help="Verify webhook servers against this CA bundle."
    ),
]
