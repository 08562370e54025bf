"""The options ``glimmer run`` takes for ``--backend kubernetes``, as types: light to import
(``glimmer --help`` loads them; the cluster client is loaded only by a kubernetes run)."""

from __future__ import annotations

from typing import Annotated

import typer

KubeconfigOpt = Annotated[
    str | None,
    typer.Option(
        metavar="FILE",
        help="--backend kubernetes: the cluster's kubeconfig (default: $KUBECONFIG, "
        "~/.kube/config, or the pod's service account).",
    ),
]
ContextOpt = Annotated[
    str | None,
    typer.Option(metavar="NAME", help="--backend kubernetes: the kubeconfig context."),
]
NamespaceOpt = Annotated[
    str | None,
    typer.Option(metavar="NS", help="--backend kubernetes: the run's namespace (default)."),
]
