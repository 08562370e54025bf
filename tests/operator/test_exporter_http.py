"""The Prometheus exporter served by the operator (§5.7): ``GET /metrics`` answers the
exposition of what Prometheus sinks were handed, over real HTTP; through kopf it is served
while the operator runs and stops with it."""

from __future__ import annotations

import socket

import httpx
import kopf
from kopf.testing import KopfRunner

from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.operator.context import OperatorContext
from glimmer.operator.exporter import MetricsEndpoint, exporter_of, register
from glimmer.operator.sinks import ClusterSinks
from glimmer.sinks.prometheus import Exporter
from tests.k8s_api import K8sAPI
from tests.sinks.sink_doubles import an_envelope


def test_metrics_are_served_over_http_from_the_exporter() -> None:
    exporter = Exporter()
    exporter.observe(an_envelope())
    endpoint = MetricsEndpoint(exporter, "127.0.0.1", 0)
    port = endpoint.start()
    try:
        answer = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10)
        assert answer.status_code == 200
        assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        assert 'burnin_run_phase{namespace="lab",run="accept-1"' in answer.text
        assert httpx.get(f"http://127.0.0.1:{port}/other", timeout=10).status_code == 404
    finally:
        endpoint.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_through_kopf_the_exporter_is_served_while_the_operator_runs(k8s_api: K8sAPI) -> None:
    client = connect(k8s_api.kubeconfig)
    sinks = ClusterSinks(client)
    context = OperatorContext.over(KubernetesBackend(client, sinks=sinks), "default", identity="t")
    exporter = exporter_of(context)
    assert exporter is sinks.exporter and exporter is not None
    exporter.observe(an_envelope())
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry)(kopf.login_with_kubeconfig)
    port = free_port()
    register(registry, context, host="127.0.0.1", port=port)
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    runner = KopfRunner(["run", "--standalone", "-A"], registry=registry, settings=settings)
    with runner as kopf_run:
        answer = _get_eventually(f"http://127.0.0.1:{port}/metrics")
        assert "burnin_exporter_runs_tracked 1" in answer.text
    assert kopf_run.exit_code == 0, kopf_run.output
    try:
        httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=2)
        served_after = True
    except httpx.TransportError:
        served_after = False
    assert not served_after


def _get_eventually(url: str) -> httpx.Response:
    import time

    deadline = time.monotonic() + 60
    while True:
        try:
            return httpx.get(url, timeout=5)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
