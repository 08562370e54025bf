"""``glimmer certify``: the certification commands.

``render`` prints the Kubernetes objects a Certification, a WorkloadRun or one catalog entry
renders to (multi-document YAML); ``crds`` prints or writes the certification CRDs;
``list-categories`` lists the catalog (:mod:`glimmer.cli.certify_categories`). ``run`` and
``report`` come from :mod:`glimmer.cli.certify_run`, ``cluster-info``, ``status`` and ``cancel``
(a cluster's certifications) from :mod:`glimmer.cli.certify_cluster`, through the hooks below.

Formatting only: loading is glimmer.api's work and rendering glimmer.certify's.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

import glimmer.api.certify.kinds  # noqa: F401  (registers the certification kinds)
from glimmer.api.certify.certification import Certification
from glimmer.api.certify.crd import all_certify_crds, crd_file_text
from glimmer.api.certify.workloadrun import WorkloadRun
from glimmer.api.crd import crd_filename, to_yaml
from glimmer.api.load import load_paths
from glimmer.certify.catalog.entries import find_entry
from glimmer.certify.catalog.render import render_certification, render_entry
from glimmer.certify.catalog.workloadrun import render_workload_run
from glimmer.certify.input_kinds import what_it_holds
from glimmer.certify.platform import names_list
from glimmer.certify.platform.errors import locate
from glimmer.cli import certify_cluster, certify_run
from glimmer.cli.certify_categories import list_categories
from glimmer.cli.output import write_manifests
from glimmer.errors import InputError, Location

certify_app = typer.Typer(
    name="certify",
    help="Certification: render Kubeflow Trainer objects, run categories, report.",
    no_args_is_help=True,
)


class _Dumper(yaml.SafeDumper):
    """Block style; multi-line strings (scripts) as literal blocks, long lines kept whole."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def manifests(objects: list[dict[str, Any]]) -> str:
    """Objects as a multi-document YAML stream, keys in the order they were built."""
    return yaml.dump_all(
        objects, Dumper=_Dumper, sort_keys=False, explicit_start=True, width=100_000
    )


def _render_file(path: str, platform: str, gpu: str) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    loaded = load_paths([path])
    if not any(isinstance(item.obj, Certification | WorkloadRun) for item in loaded):
        # Refused before anything renders, naming what the file holds instead.
        raise InputError(
            f"holds no Certification or WorkloadRun to render: it holds {what_it_holds(loaded)}",
            Location(file=path),
        )
    for item in loaded:
        try:
            if isinstance(item.obj, Certification):
                objects += render_certification(item.obj, platform, gpu)
            elif isinstance(item.obj, WorkloadRun):
                objects += render_workload_run(item.obj, platform, gpu)
            else:
                continue
        except InputError as e:
            if e.location.file is None and (e.location.obj or e.location.field):
                locate(e, item)  # about the object: its file, and the line of its field
            raise
    return objects


def render(
    file: Annotated[
        str | None, typer.Option("--file", "-f", help="A Certification or WorkloadRun file.")
    ] = None,
    entry: Annotated[
        str | None,
        typer.Option(
            "--entry", help="Render one catalog entry (VARIANT or DOMAIN/VARIANT) with defaults."
        ),
    ] = None,
    platform: Annotated[
        str, typer.Option("--platform", help=f"One of {names_list()} (default onprem).")
    ] = "",
    gpu: Annotated[
        str,
        typer.Option(
            "--gpu",
            help="GPU architecture (h100, gb200, ...) or a nvidia.com/gpu.product value; "
            "wins over the target's product selector.",
        ),
    ] = "",
) -> None:
    """Print the Kubernetes objects (TrainingRuntime, TrainJob, ...) as multi-document YAML."""
    if (file is None) == (entry is None):
        raise InputError("give exactly one of -f FILE and --entry NAME")
    if entry is not None:
        try:
            found = find_entry(entry)
        except InputError as e:
            raise InputError(e.message, Location(field="--entry")) from None
        objects = render_entry(found.domain, found.variant, platform, gpu)
    else:
        assert file is not None
        objects = _render_file(file, platform, gpu)
    sys.stdout.write(manifests(objects))


def crds(
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir", help="Write one file per CRD into this folder.", file_okay=False
        ),
    ] = None,
) -> None:
    """Print the CRDs of the certification kinds.

    Certification, WorkloadRun, LogProfile and ReportExportPolicy, which users write;
    Workflow, Job, GoodputMeasurement, BandwidthMeasurement and ReportExport, which the
    controllers write."""
    objs = all_certify_crds()
    write_manifests(objs, output_dir, crd_filename, crd_file_text, to_yaml(objs))


certify_app.command("render")(render)
certify_app.command("crds")(crds)
certify_app.command("list-categories")(list_categories)

# Hooks: `certify run` and `certify report` (glimmer.cli.certify_run), `certify cluster-info`,
# `status` and `cancel` (glimmer.cli.certify_cluster) join the same sub-app.
certify_run.register(certify_app)
certify_cluster.register(certify_app)


def register(app: typer.Typer) -> None:
    """Add the ``certify`` sub-app to the glimmer app."""
    app.add_typer(certify_app, name="certify")
