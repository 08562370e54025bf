"""How kopf logs in: the kubeconfig the operator was given (or ``$KUBECONFIG``, or
``~/.kube/config``), else the pod's service account — the same places the backend's lightkube
client looks, so kopf's watches and the engine's calls reach the same cluster as the same user.
A fresh ``kopf.OperatorRegistry`` has no login handler of its own."""

from __future__ import annotations

from typing import Any

import kopf


def login(**kwargs: Any) -> kopf.ConnectionInfo | None:
    found = kopf.login_with_kubeconfig(**kwargs)
    return found if found is not None else kopf.login_with_service_account(**kwargs)


def register(registry: kopf.OperatorRegistry) -> None:
    kopf.on.login(id="login", registry=registry)(login)
