"""The operator's command line, parsed and checked without importing kopf or lightkube, so the
CLI (which must never import them) refuses bad input itself before it starts the operator.

``run [--kubeconfig K] [--namespace N | --all-namespaces] [--standalone | --peering NAME]
[--liveness URL] [--metrics HOST:PORT] [--allow-plain-http-exports]``. Without a namespace
choice the operator serves every namespace; without a peering choice it elects a leader
through the peering object ``glimmer-operator``; without ``--metrics`` no ``/metrics`` is
served; without ``--allow-plain-http-exports`` a ReportExport to an ``http://`` webhook is
refused (reports go over HTTPS only).
"""

from __future__ import annotations

import argparse
import importlib.util
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from glimmer.operator.peering import DEFAULT_PEERING

# A DNS-1123 label (a namespace) and subdomain (an object's name).
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")

K8S_EXTRA = "pip install 'glimmer[k8s]'"


def missing_extra() -> list[str]:
    """The k8s extra's packages this environment lacks (looked up, not imported)."""
    return [m for m in ("kopf", "lightkube") if importlib.util.find_spec(m) is None]


class UsageError(ValueError):
    """Bad input on the operator's command line (exit 2)."""


@dataclass(frozen=True)
class OperatorOptions:
    kubeconfig: Path | None = None
    namespace: str | None = None  # None: every namespace
    standalone: bool = False
    peering: str = DEFAULT_PEERING
    liveness: str | None = None
    metrics: tuple[str, int] | None = None  # where /metrics is served (None: not served)
    allow_plain_http_exports: bool = False  # ReportExports to http:// webhooks allowed

    def argv(self) -> list[str]:
        """These options as ``run`` arguments (what the CLI hands to ``python -m``)."""
        out = ["run"]
        if self.kubeconfig is not None:
            out += ["--kubeconfig", str(self.kubeconfig)]
        out += ["--namespace", self.namespace] if self.namespace else ["--all-namespaces"]
        out += ["--standalone"] if self.standalone else ["--peering", self.peering]
        if self.liveness:
            out += ["--liveness", self.liveness]
        if self.metrics is not None:
            out += ["--metrics", f"{self.metrics[0]}:{self.metrics[1]}"]
        if self.allow_plain_http_exports:
            out += ["--allow-plain-http-exports"]
        return out


def checked(
    *,
    kubeconfig: Path | None = None,
    namespace: str | None = None,
    all_namespaces: bool = False,
    standalone: bool = False,
    peering: str | None = None,
    liveness: str | None = None,
    metrics: str | None = None,
    allow_plain_http_exports: bool = False,
) -> OperatorOptions:
    """The options, or :class:`UsageError` naming what is wrong."""
    if namespace is not None and all_namespaces:
        raise UsageError("--namespace and --all-namespaces exclude each other: choose one")
    if standalone and peering is not None:
        raise UsageError("--standalone and --peering exclude each other: choose one")
    if namespace is not None and not _LABEL.match(namespace):
        raise UsageError(f"--namespace {namespace!r} is not a namespace name (DNS-1123 label)")
    if peering is not None and not _SUBDOMAIN.match(peering):
        raise UsageError(f"--peering {peering!r} is not an object name (DNS-1123 subdomain)")
    if kubeconfig is not None and not kubeconfig.is_file():
        raise UsageError(f"--kubeconfig {str(kubeconfig)!r}: no such file")
    if liveness is not None:
        url = urlparse(liveness)
        if url.scheme != "http" or not url.hostname or url.port is None:
            raise UsageError(
                f"--liveness {liveness!r} must be an http URL with a host and a port, "
                "for example http://0.0.0.0:8080/healthz"
            )
    return OperatorOptions(
        kubeconfig=kubeconfig,
        namespace=namespace,
        standalone=standalone,
        peering=peering or DEFAULT_PEERING,
        liveness=liveness,
        metrics=_address(metrics) if metrics is not None else None,
        allow_plain_http_exports=allow_plain_http_exports,
    )


def _address(given: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` for every address) where ``/metrics`` is served."""
    host, sep, port = given.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise UsageError(
            f"--metrics {given!r} must be HOST:PORT, for example 0.0.0.0:8080 (:8080 for every "
            "address)"
        )
    return host or "0.0.0.0", int(port)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def parse(argv: Sequence[str]) -> OperatorOptions:
    """``run ...`` as :class:`OperatorOptions`, or :class:`UsageError`."""
    parser = _Parser(prog="python -m glimmer.operator", add_help=False)
    parser.add_argument("command", choices=["run"])
    parser.add_argument("--kubeconfig", type=Path)
    parser.add_argument("--namespace", "-n")
    parser.add_argument("--all-namespaces", "-A", action="store_true")
    parser.add_argument("--standalone", action="store_true")
    parser.add_argument("--peering")
    parser.add_argument("--liveness")
    parser.add_argument("--metrics")
    parser.add_argument("--allow-plain-http-exports", action="store_true")
    args = parser.parse_args(list(argv))
    return checked(
        kubeconfig=args.kubeconfig,
        namespace=args.namespace,
        all_namespaces=args.all_namespaces,
        standalone=args.standalone,
        peering=args.peering,
        liveness=args.liveness,
        metrics=args.metrics,
        allow_plain_http_exports=args.allow_plain_http_exports,
    )
