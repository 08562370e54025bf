"""What every handler of the operator shares: one backend, one engine over it, the namespace it
serves, the clock, and this replica's peering identity.

One engine for the whole process (not one per run): the engine's memory is keyed by run, and
the busy set and node infos it keeps are shared across runs on purpose (two runs never hold
the same node). kopf calls sync handlers from its thread pool, so passes over *different* runs
may overlap; passes over one run are serialised by the caller (:mod:`glimmer.operator.runs`).
"""

from __future__ import annotations

import os
import secrets
import socket
from dataclasses import dataclass
from pathlib import Path

from lightkube import Client

from glimmer import __version__
from glimmer.backends.common.clock import HostClock, SubstrateClock
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.engine.reconciler import Engine
from glimmer.sinks.sinkset import SinkSet


def own_identity() -> str:
    """This replica's peering id: the pod's name where the manifests pass it (``POD_NAME``),
    else host, pid and a random tail, so two replicas started on one host never share one."""
    pod = os.environ.get("POD_NAME") or os.environ.get("POD_ID")
    if pod:
        return pod
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def user_agent(identity: str) -> str:
    return f"glimmer-operator/{__version__} ({identity})"


def identify(client: Client, identity: str) -> None:
    """Send this replica's identity as the engine's User-Agent, so an API server's audit log
    (and the stand-in's journal) tells which replica made each call. lightkube has no option
    for it; its httpx client's default headers are where every request's come from."""
    http = getattr(getattr(client, "_client", None), "_client", None)
    headers = getattr(http, "headers", None)
    if headers is not None:
        headers["User-Agent"] = user_agent(identity)


@dataclass(frozen=True)
class OperatorContext:
    """The shared parts; built once by :meth:`connect` before any handler is registered."""

    backend: KubernetesBackend
    engine: Engine
    namespace: str | None  # None: every namespace
    clock: SubstrateClock
    identity: str

    @classmethod
    def connect(
        cls,
        kubeconfig: Path | str | None = None,
        namespace: str | None = None,
        *,
        context: str | None = None,
        identity: str | None = None,
        clock: SubstrateClock | None = None,
        sinks: SinkSet | None = None,
    ) -> OperatorContext:
        """The context for the cluster ``kubeconfig`` names (None: ``$KUBECONFIG``, the
        in-cluster service account, or ``~/.kube/config``)."""
        chosen = clock or HostClock()
        identity = identity or own_identity()
        client = connect(kubeconfig, context=context)
        identify(client, identity)
        backend = KubernetesBackend(client, sinks=sinks, clock=chosen)
        return cls.over(backend, namespace, identity=identity)

    @classmethod
    def over(
        cls,
        backend: KubernetesBackend,
        namespace: str | None = None,
        *,
        identity: str | None = None,
    ) -> OperatorContext:
        """The context over a backend already built (a test's, with its own clock)."""
        return cls(
            backend=backend,
            engine=Engine(backend),
            namespace=namespace,
            clock=backend.clock,
            identity=identity or own_identity(),
        )
