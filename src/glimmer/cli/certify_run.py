"""``glimmer certify run`` and ``glimmer certify report``: a certification on the simulated fleet,
and the report card of a saved result (specs/certify.md §8). ``certify run --backend kubernetes``
creates the Certification on a cluster and follows it (:mod:`glimmer.cli.certify_cluster`).

Formatting only: selecting nodes, running categories, isolating and judging are
:mod:`glimmer.certify`'s work. Exit codes: 0 certified (PASSED, or INCOMPLETE when nodes of
other architectures were left out and nothing failed), 1 not certified (the failed nodes are
named), 2 bad input.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from glimmer.api.budget import check_size
from glimmer.backends.common.registry import SIM
from glimmer.certify.report_card import WIDTH, render
from glimmer.certify.result import FAILED, NOT_A_RESULT, CertResult, from_doc, to_doc
from glimmer.certify.spec import load_certification
from glimmer.cli.conventions import DEFAULT_SEED, SeedOpt
from glimmer.cli.kube_options import ContextOpt, KubeconfigOpt
from glimmer.cli.output import console, print_json
from glimmer.errors import InputError, Location
from glimmer.fleet.faultspec import SYNTAX, parse_faults
from glimmer.fleet.load import load_topology


class Output(StrEnum):
    TABLE = "table"
    JSON = "json"


class Backend(StrEnum):
    """Where ``certify run`` runs: the simulated fleet, or a cluster's operator."""

    SIM = "sim"
    KUBERNETES = "kubernetes"


# The flags that shape the simulated fleet, and those that name a cluster.
SIM_ONLY = ("fleet", "fault", "seed")
CLUSTER_ONLY = ("kubeconfig", "context", "namespace", "timeout")


def _given(ctx: typer.Context, names: tuple[str, ...]) -> list[str]:
    # Given on the command line, not merely at its default (--seed 0 given counts).
    sources = {n: ctx.get_parameter_source(n) for n in names}
    return [f"--{n}" for n, got in sources.items() if got is not None and got.name == "COMMANDLINE"]


def _refuse_mixed_flags(ctx: typer.Context, backend: Backend) -> None:
    if backend is Backend.KUBERNETES:
        for flag in _given(ctx, SIM_ONLY):
            raise InputError(
                f"{flag}: shapes the simulated fleet and means nothing with --backend "
                "kubernetes (the cluster's own nodes are certified)"
            )
    for flag in _given(ctx, CLUSTER_ONLY):
        if backend is Backend.SIM:
            raise InputError(f"{flag}: only with --backend kubernetes")


@contextmanager
def _flag(name: str) -> Iterator[None]:
    """An error about a flag's value that names no file is located at the flag, so the user
    knows which argument to fix."""
    try:
        yield
    except InputError as e:
        if e.location.file is None and e.location.field is None:
            raise InputError(e.message, Location(field=name)) from None
        raise


def _exit_code(result: CertResult) -> int:
    return 1 if result.result == FAILED else 0


def run(
    ctx: typer.Context,
    file: Annotated[str, typer.Option("--file", "-f", help="A Certification YAML file.")],
    fleet: Annotated[
        str, typer.Option("--fleet", help="Built-in fleet (ai-factory, hgx-1k …) or a file.")
    ] = "ai-factory",
    fault: Annotated[
        list[str] | None, typer.Option("--fault", help=f"Plant a fault: {SYNTAX}. Repeatable.")
    ] = None,
    seed: SeedOpt = DEFAULT_SEED,
    output: Annotated[
        Output, typer.Option("--output", "-o", help="table (the report card) or json.")
    ] = Output.TABLE,
    backend: Annotated[
        Backend,
        typer.Option(
            "--backend",
            help="sim: the simulated fleet; kubernetes: create the Certification on a cluster "
            "and follow it while the operator runs it.",
        ),
    ] = Backend.SIM,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    namespace: Annotated[
        str | None,
        typer.Option(
            "--namespace",
            "-n",
            metavar="NS",
            help="--backend kubernetes: the Certification's namespace (default: the file's, "
            "else default).",
        ),
    ] = None,
    timeout: Annotated[
        str | None,
        typer.Option(
            metavar="DURATION",
            help="--backend kubernetes: stop following after this long (30m, 2h); exit 1, "
            "the Certification goes on (default: follow it to its end).",
        ),
    ] = None,
) -> None:
    """Run a Certification's categories, isolate bad nodes and print the report card.

    On the simulated fleet by default; with --backend kubernetes the Certification is created
    on the cluster and followed while the operator runs it."""
    _refuse_mixed_flags(ctx, backend)
    if backend is Backend.KUBERNETES:
        from glimmer.cli.certify_cluster_run import run_on_cluster

        code = run_on_cluster(
            file, kubeconfig, context, namespace, output is Output.JSON, timeout=timeout
        )
        raise typer.Exit(code)
    spec = load_certification(file)
    planted = parse_faults(list(fault or []))
    with _flag("--fleet"):
        topology = load_topology(fleet)
    with _flag("--fault"):
        twin = SIM.fleet_twin(topology, planted)
    result = SIM.certify(twin, spec, seed=seed, faults=[f.render() for f in planted])
    if output is Output.JSON:
        print_json(to_doc(result))
    else:
        typer.echo(render(result, card_width()), nl=False)
    raise typer.Exit(_exit_code(result))


def card_width() -> int:
    """The report card's width: the terminal's when it is narrower than the card, else the
    card's own (off a terminal, as in a CI log, the card is never narrowed)."""
    if console.is_terminal:
        return min(WIDTH, console.width)
    return WIDTH


def report(
    result: Annotated[str, typer.Argument(help="A result saved from `certify run -o json`.")],
) -> None:
    """Print the report card of a saved certification result."""
    check_size(result, "certification-result")  # refused before it is read when oversized
    try:
        doc = json.loads(Path(result).read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", Location(file=result)) from None
    except UnicodeDecodeError:
        raise InputError(f"{NOT_A_RESULT}: not UTF-8 text", Location(file=result)) from None
    except json.JSONDecodeError as e:
        raise InputError(f"{NOT_A_RESULT}: not JSON ({e})", Location(file=result)) from None
    got = from_doc(doc, result)
    typer.echo(render(got, card_width()), nl=False)
    raise typer.Exit(_exit_code(got))


def register(certify_app: typer.Typer) -> None:
    """Add ``run`` and ``report`` to the ``certify`` sub-app."""
    certify_app.command("run")(run)
    certify_app.command("report")(report)
