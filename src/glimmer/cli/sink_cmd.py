"""``glimmer sink serve``: the Prometheus sink's ``/metrics``, fed by envelopes already delivered
to a file sink (JSONL) or a folder sink. ``glimmer sink flush``: re-send what the outbox owes.
Formatting and flags only: the exporter, the reading of envelopes and the outbox live in
glimmer.sinks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from glimmer.api.sink import redact
from glimmer.cli.output import serve_until_interrupted
from glimmer.cli.run_inputs import DEFAULT_SINK_STATE, SinkFlags, sink_set_for
from glimmer.errors import InputError
from glimmer.sinks.config import FLAG_FORMS
from glimmer.sinks.flush import FlushReport, flush
from glimmer.sinks.prometheus import Exporter
from glimmer.sinks.serve import EnvelopeSource, metrics_server

MAX_PORT = 65_535

sink_app = typer.Typer(
    name="sink",
    help="Sinks: serve delivered envelopes as Prometheus metrics; flush the outbox.",
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
    if not 0 <= port <= MAX_PORT:
        # Worded as ``glimmer fleet serve`` words it: one message for one mistake.
        raise InputError(f"--port: must be a TCP port from 0 to {MAX_PORT}, got {port}")
    if not host.strip():
        raise InputError("--host: give an address to listen on (for example 127.0.0.1)")
    if source is not None and not source.exists():
        raise InputError(f"--from: {source} does not exist (a JSONL file or a sink folder)")
    exporter = Exporter()
    feed = EnvelopeSource(source, exporter) if source is not None else None
    if once:
        if feed is not None:
            try:
                feed.refresh()
            except OSError as e:
                raise InputError(f"--from: cannot read {source}: {e.strerror or e}") from None
        sys.stdout.write(exporter.exposition())
        return
    try:
        server = metrics_server(exporter, feed, host, port)
    except (OSError, OverflowError, UnicodeError) as e:
        # A busy port, an address that is not this host's, a name that does not resolve.
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise InputError(f"--port/--host: cannot listen on {host}:{port}: {why}") from None
    bound = server.server_address[1]
    fed = f"envelopes from {source}" if source is not None else "no envelopes (no --from)"
    print(f"serving {fed} on http://{host}:{bound}/metrics", file=sys.stderr, flush=True)
    serve_until_interrupted(server)


@sink_app.command("flush")
def flush_cmd(
    sink: Annotated[
        list[str] | None,
        typer.Option(
            "--sink", metavar="SPEC", help=f"A sink to re-send to: {FLAG_FORMS}; repeatable."
        ),
    ] = None,
    sink_state: Annotated[
        str | None,
        typer.Option(
            "--sink-state",
            metavar="DIR",
            help=f"The outbox to flush (default ./{DEFAULT_SINK_STATE}).",
        ),
    ] = None,
    sink_secret_file: Annotated[
        str | None,
        typer.Option("--sink-secret-file", metavar="PATH", help="Webhook signing secret file."),
    ] = None,
    sink_secret_env: Annotated[
        str | None,
        typer.Option("--sink-secret-env", metavar="NAME", help="Webhook signing secret variable."),
    ] = None,
    sink_ca: Annotated[
        str | None,
        typer.Option("--sink-ca", metavar="PATH", help="CA bundle for webhook servers."),
    ] = None,
) -> None:
    """Re-send the envelopes the outbox owes to these sinks, oldest first.

    Exit codes: 0 nothing owed any more, 1 something still owed, 2 bad input.
    """
    if not sink:
        raise InputError(f"--sink: give the sinks to flush ({FLAG_FORMS}); repeatable")
    flags = SinkFlags(tuple(sink), sink_state, sink_secret_file, sink_secret_env, sink_ca)
    sinks = sink_set_for(flags, simulated=False)
    assert sinks is not None  # there is at least one spec
    try:
        report = flush(sinks)
    finally:
        sinks.close()
    _print_flush(report)
    raise typer.Exit(1 if report.owed else 0)


def _print_flush(report: FlushReport) -> None:
    for s in report.sinks:
        if not (s.delivered or s.dropped or s.owed):
            print(f"{s.sink}: nothing owed")
            continue
        line = f"{s.sink}: {s.delivered} delivered, {s.owed} still owed"
        if s.dropped:
            line += f", {s.dropped} refused for good and dropped"
        print(line + (f" ({s.error})" if s.error else ""))
    for ident, owed in report.elsewhere:
        # Not counted in the exit code: the user did not ask for these sinks.
        # An outbox written before URLs were redacted may name a sink by its raw URL.
        print(f"{redact(ident)}: {owed} owed, not flushed (not among the --sink given)")


def register(app: typer.Typer) -> None:
    """Add ``glimmer sink …`` to the glimmer app."""
    app.add_typer(sink_app, name="sink")
