"""The Prometheus exporter served by the operator process (specs/burnin.md §5.7).

Delivery to a ``Prometheus`` BurnInSink hands the envelope to the process's in-memory
:class:`~glimmer.sinks.prometheus.Exporter` (it always succeeds); this module serves that
exporter's exposition on ``GET /metrics`` (default ``:8080``, the metrics Service's port) from a
thread of its own, with the HTTP server of ``glimmer sink serve``
(:func:`glimmer.sinks.serve.metrics_server`). A run's series go when the run is deleted or
TTL-collected (the backend's delivery forgets them), not when it merely finishes. The
certification measurements' ``burnin_nccl_*`` and ``burnin_goodput_*`` gauges are held by the
same exporter (:mod:`glimmer.operator.certify.measurement_metrics`, ``Exporter.hold``), set at
every sample and forgotten when the measurement is deleted: one registry, one endpoint.

The liveness probe is kopf's own (``--liveness``, see :mod:`glimmer.operator.manifests`): it
answers only while kopf's loop runs, which a server in its own thread cannot tell.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from glimmer.sinks.prometheus import Exporter
from glimmer.sinks.serve import metrics_server
from glimmer.sinks.sinkset import SinkSet

if TYPE_CHECKING:
    import kopf

    from glimmer.operator.context import OperatorContext

log = logging.getLogger(__name__)

METRICS_HOST = "0.0.0.0"
METRICS_PORT = 8080


@dataclass
class MetricsEndpoint:
    """``/metrics`` of ``exporter`` on ``host:port`` (0: any free port), once started."""

    exporter: Exporter
    host: str = METRICS_HOST
    port: int = METRICS_PORT
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = field(default=None, repr=False)

    def start(self) -> int:
        """Serve from a thread; the port bound."""
        self._server = metrics_server(self.exporter, None, self.host, self.port)
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="glimmer-metrics", daemon=True
        )
        self._thread.start()
        log.info("serving /metrics on %s:%d", self.host, self.port)
        return self.port

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None


def exporter_of(context: OperatorContext) -> Exporter | None:
    """The exporter the backend's sinks deliver Prometheus envelopes to, if any."""
    sinks = context.backend.delivery.sinks
    return sinks.exporter if isinstance(sinks, SinkSet) else None


def register(
    registry: kopf.OperatorRegistry,
    context: OperatorContext,
    *,
    host: str = METRICS_HOST,
    port: int = METRICS_PORT,
) -> None:
    """Serve ``/metrics`` while the operator runs (nothing when its sinks have no exporter)."""
    import kopf

    exporter = exporter_of(context)
    if exporter is None:
        return
    endpoint = MetricsEndpoint(exporter, host, port)

    @kopf.on.startup(registry=registry, id="metrics-serve")
    def serve(**_: Any) -> None:
        endpoint.start()

    @kopf.on.cleanup(registry=registry, id="metrics-stop")
    def stop(**_: Any) -> None:
        endpoint.stop()
