"""``glimmer fleet telemetry`` and ``glimmer fleet serve``: the simulated fleet's telemetry.

``telemetry`` prints the Prometheus exposition at one simulated instant; ``serve`` answers
``/metrics`` over HTTP/1.1 (keep-alive; the body streamed in chunks, gzipped when the scraper
accepts gzip) while simulated time runs at ``--speed`` times wall time. Both take the fleet's
declared faults plus any ``--fault MODE@TARGET[=INTENSITY]``. The simulator does the work; this
module only reads flags and writes text.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Annotated, Protocol

import typer

from glimmer.backends.common.registry import SIM
from glimmer.cli.http_body import accepts_gzip, send_streamed, send_whole
from glimmer.cli.output import serve_until_interrupted
from glimmer.errors import InputError
from glimmer.fleet.faultspec import SYNTAX, parse_faults
from glimmer.fleet.load import load_topology

if TYPE_CHECKING:
    from glimmer.backends.common.registry import FleetSim

MAX_PORT = 65535
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# A keep-alive connection left idle (or a client that stops reading) is dropped after this
# long, so it does not hold a server thread for ever.
IDLE_TIMEOUT_S = 60.0

FLEET_HELP = "Built-in fleet name (ai-factory, hgx-1k …) or a Fleet YAML/JSON file."
FAULT_HELP = f"Inject a fault: {SYNTAX} (repeatable; active for the whole run)."


def _at(text: str, flag: str) -> float:
    try:
        return SIM.parse_time(text)
    except ValueError as e:
        raise InputError(f"{flag}: {e}") from None


def _sim(fleet: str, faults: list[str], noise: bool) -> FleetSim:
    specs = parse_faults(faults)
    return SIM.twin(load_topology(fleet), specs, noise=noise)


FleetOpt = Annotated[str, typer.Option("--fleet", help=FLEET_HELP)]
FaultOpt = Annotated[list[str] | None, typer.Option("--fault", help=FAULT_HELP)]
NoiseOpt = Annotated[
    bool, typer.Option("--noise/--no-noise", help="Seeded measurement noise on gauges.")
]


def telemetry(
    fleet: FleetOpt,
    at: Annotated[
        str,
        typer.Option("--at", help="Simulated instant: RFC 3339, or an offset such as +2h."),
    ] = "+0s",
    fault: FaultOpt = None,
    noise: NoiseOpt = True,
) -> None:
    """Print the fleet's Prometheus exposition at a simulated instant."""
    t = _at(at, "--at")
    sys.stdout.writelines(_sim(fleet, fault or [], noise).exposition_chunks(t))
    sys.stdout.flush()


class Clock(Protocol):
    def now(self) -> float: ...


class SimClock:
    """Simulated time that starts at ``start`` and runs ``speed`` times as fast as the wall."""

    def __init__(self, start: float, speed: float) -> None:
        self.start, self.speed = start, speed
        self.wall0 = time.monotonic()

    def now(self) -> float:
        return self.start + (time.monotonic() - self.wall0) * self.speed


def _handler(sim: FleetSim, clock: Clock) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()  # the simulator caches per fleet; one scrape renders at a time

    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1: a scraper keeps its connection between scrapes; every response says where
        # its body ends (Content-Length, or the last chunk).
        protocol_version = "HTTP/1.1"
        timeout = IDLE_TIMEOUT_S

        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != "/metrics":
                headers = {"Content-Type": "text/plain; charset=utf-8"}
                send_whole(self, 404, headers, b"not found; try /metrics\n")
                return
            with lock:
                t = clock.now()
                # Rendered under the lock (one string per metric family), written after it:
                # a slow scraper does not hold up the next one.
                families = sim.exposition_chunks(t)
            headers = {"Content-Type": CONTENT_TYPE, "X-Glimmer-Simulated-Time": SIM.rfc3339(t)}
            gzip = accepts_gzip(self.headers.get("Accept-Encoding"))
            send_streamed(self, 200, headers, families, gzip=gzip)

        def log_message(self, format: str, *args: object) -> None:
            return  # scrapes are frequent; stay quiet

    return Handler


def metrics_server(sim: FleetSim, clock: Clock, host: str, port: int) -> ThreadingHTTPServer:
    """The /metrics server of ``sim`` on ``host:port`` (0: a free port), not yet serving.
    OSError when it cannot listen there."""
    return ThreadingHTTPServer((host, port), _handler(sim, clock))


def serve(
    fleet: FleetOpt,
    port: Annotated[
        int, typer.Option("--port", "-p", help="TCP port (0 picks a free one).")
    ] = 9400,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    speed: Annotated[
        float, typer.Option("--speed", help="Simulated seconds per wall-clock second.")
    ] = 1.0,
    start: Annotated[
        str, typer.Option("--start", help="Simulated instant the clock starts at (as --at).")
    ] = "+0s",
    fault: FaultOpt = None,
    noise: NoiseOpt = True,
) -> None:
    """Serve the fleet's telemetry on /metrics while simulated time advances."""
    if not 0 <= port <= MAX_PORT:  # the socket layer would raise OverflowError instead
        raise InputError(f"--port: must be a TCP port from 0 to {MAX_PORT}, got {port}")
    if not (speed > 0 and math.isfinite(speed)):
        raise InputError(f"--speed: must be a positive finite number, got {speed}")
    sim = _sim(fleet, fault or [], noise)
    clock = SimClock(_at(start, "--start"), speed)
    try:
        server = metrics_server(sim, clock, host, port)
    except OSError as e:
        raise InputError(f"--port: cannot listen on {host}:{port}: {e.strerror}") from None
    bound = server.server_address[1]
    print(
        f"serving fleet {sim.topo.name} on http://{host}:{bound}/metrics "
        f"(simulated time from {SIM.rfc3339(clock.start)}, speed x{speed:g})",
        file=sys.stderr,
        flush=True,
    )
    serve_until_interrupted(server)


def register(fleet_app: typer.Typer) -> None:
    """Add ``telemetry`` and ``serve`` to the ``glimmer fleet`` command group."""
    fleet_app.command("telemetry")(telemetry)
    fleet_app.command("serve")(serve)
