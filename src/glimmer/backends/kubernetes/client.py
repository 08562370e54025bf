"""The API client: lightkube's synchronous :class:`~lightkube.Client`, one per backend.

Why the synchronous client and not lightkube's async one behind a facade: the engine's
protocol is synchronous and every pass makes its calls one after another, and kopf runs sync
handlers in its own thread pool — a private event loop on a thread would only add a hop per
call, a loop to start and stop, and a second place for errors to surface, for no concurrency
the engine could use. The sync client has the same API and types as the async one and one
httpx connection pool, safe to share between kopf's handler threads.
"""

from __future__ import annotations

from pathlib import Path

import httpx2
from lightkube import Client, KubeConfig

FIELD_MANAGER = "glimmer"
TIMEOUT_SECONDS = 30.0  # one call; a pass that times out fails and is retried


def connect(
    kubeconfig: Path | str | None = None,
    *,
    context: str | None = None,
    namespace: str | None = None,
) -> Client:
    """A client for the cluster ``kubeconfig`` names (None: ``$KUBECONFIG``, the in-cluster
    service account, or ``~/.kube/config``, as kubectl finds it)."""
    if kubeconfig is not None:
        config = KubeConfig.from_file(str(kubeconfig)).get(context_name=context)
    else:
        config = KubeConfig.from_env().get(context_name=context)
    return Client(
        config,
        namespace=namespace,
        field_manager=FIELD_MANAGER,
        timeout=httpx2.Timeout(TIMEOUT_SECONDS),
    )
