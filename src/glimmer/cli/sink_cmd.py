"""``glimmer sink serve``: the Prometheus sink's ``/metrics``, fed by envelopes already delivered
to a file sink (JSONL) or a folder sink. Formatting and flags only: the exporter and the reading
of envelopes live in glimmer.sinks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from glimmer.cli.output import serve_until_interrupted
from glimmer.errors import InputError
from glimmer.sinks.prometheus import Exporter
from glimmer.sinks.serve import EnvelopeSource, metrics_server

sink_app = typer.Typer(
    name="sink",
    help="Sinks: serve delivered envelopes as Prometheus metrics.",
    no_args_is_help=True,
)


@sink_app.command("serve")
def serve(
    port: Annotated[
        int, typer.Option("--port", "-p", help="TCP port (0 picks a free one).")
    ] = 8080,
    source: Annotated[
        Path | None,
        typer.Option(
            "--from",
            help="A file sink (JSONL) or a folder sink to read envelopes from; re-read at "
            "each scrape.",
        ),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    once: Annotated[
        bool, typer.Option("--once", help="Print the exposition once and exit (no server).")
    ] = False,
) -> None:
    """Serve /metrics (burnin_run_phase, burnin_test_metric, …) for the latest 128 runs."""
    if source is not None and not source.exists():
        raise InputError(f"--from: {source} does not exist (a JSONL file or a sink folder)")
    exporter = Exporter()
    feed = EnvelopeSource(source, exporter) if source is not None else None
    if once:
        if feed is not None:
            feed.refresh()
        sys.stdout.write(exporter.exposition())
        return
    try:
        server = metrics_server(exporter, feed, host, port)
    except OSError as e:
        raise InputError(f"--port: cannot listen on {host}:{port}: {e.strerror}") from None
    bound = server.server_address[1]
    fed = f"envelopes from {source}" if source is not None else "no envelopes (no --from)"
    print(f"serving {fed} on http://{host}:{bound}/metrics", file=sys.stderr, flush=True)
    serve_until_interrupted(server)


def register(app: typer.Typer) -> None:
    """Add ``glimmer sink …`` to the glimmer app."""
    app.add_typer(sink_app, name="sink")
