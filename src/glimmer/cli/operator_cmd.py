"""``glimmer operator run``: the Kubernetes operator in the foreground.

The CLI must not import kopf, even indirectly (an import-linter contract), so this command
checks its input with the operator's kopf-free option rules (glimmer.operator.options), then
replaces this process with ``python -m glimmer.operator run ...`` — the same interpreter, the
same arguments, the operator's own signals and exit code — rather than importing the operator.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from glimmer.errors import InputError
from glimmer.operator.options import K8S_EXTRA, UsageError, checked, missing_extra

operator_app = typer.Typer(
    name="operator",
    help="The Kubernetes operator: reconcile BurnInRuns in a cluster.",
    no_args_is_help=True,
)


@operator_app.command("run")
def run(
    kubeconfig: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="The cluster's kubeconfig (default: $KUBECONFIG, ~/.kube/config, or the "
            "pod's service account).",
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", metavar="NS", help="Serve this namespace only."),
    ] = None,
    all_namespaces: Annotated[
        bool,
        typer.Option("--all-namespaces", "-A", help="Serve every namespace (the default)."),
    ] = False,
    standalone: Annotated[
        bool,
        typer.Option(
            "--standalone", help="No leader election: for a single replica (never run two)."
        ),
    ] = False,
    peering: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Elect a leader among replicas through this KopfPeering object "
            "(default: glimmer-operator).",
        ),
    ] = None,
    liveness: Annotated[
        str | None,
        typer.Option(
            metavar="URL", help="Serve a liveness probe, e.g. http://0.0.0.0:8081/healthz."
        ),
    ] = None,
    metrics: Annotated[
        str | None,
        typer.Option(
            metavar="HOST:PORT",
            help="Serve the Prometheus sinks' /metrics here, e.g. 0.0.0.0:8080 (default: not "
            "served; the Deployment of deploy/operator serves it on 8080).",
        ),
    ] = None,
    allow_plain_http_exports: Annotated[
        bool,
        typer.Option(
            "--allow-plain-http-exports",
            help="Let ReportExports deliver to http:// webhooks (default: https only).",
        ),
    ] = False,
) -> None:
    """Run the operator in the foreground until SIGINT or SIGTERM.

    It drives every BurnInRun through the engine: cordons, runner pods, status, deliveries.

    Bad input or a missing k8s extra: exit 2.
    """
    try:
        options = checked(
            kubeconfig=kubeconfig,
            namespace=namespace,
            all_namespaces=all_namespaces,
            standalone=standalone,
            peering=peering,
            liveness=liveness,
            metrics=metrics,
            allow_plain_http_exports=allow_plain_http_exports,
        )
    except UsageError as e:
        raise InputError(str(e)) from None
    missing = missing_extra()
    if missing:
        raise InputError(f"the operator needs {', '.join(missing)} (the k8s extra): {K8S_EXTRA}")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "glimmer.operator", *options.argv()])


@operator_app.command("manifests")
def manifests(
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir",
            metavar="DIR",
            help="Write one file per part into DIR (as deploy/operator holds them) instead of "
            "printing one stream for kubectl apply -f -.",
        ),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option(metavar="REF", help="The operator image (default: this release's)."),
    ] = None,
) -> None:
    """Print the operator's deployment: namespace, CRDs, least-privilege RBAC, Deployment and
    metrics Service (glimmer operator manifests | kubectl apply -f -)."""
    from glimmer.operator import manifests as generated  # kopf-free: pure data and YAML

    chosen = image or generated.IMAGE
    if output_dir is None:
        sys.stdout.write(generated.text(chosen))
        return
    if output_dir.exists() and not output_dir.is_dir():
        raise InputError(f"--output-dir {output_dir}: not a folder")
    for path in generated.write(output_dir, chosen):
        print(path)


def register(app: typer.Typer) -> None:
    """Add ``glimmer operator`` to the app."""
    app.add_typer(operator_app)
