"""``glimmer validate PATH...`` and ``glimmer crds``: the burn-in resources as files.

Formatting only: loading, validation and CRD generation live in glimmer.api.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from glimmer.api.crd import all_crds, crd_file_text, crd_filename, to_yaml
from glimmer.api.load import Loaded, collect_paths, silent_files
from glimmer.cli.fleet import fleet_problems
from glimmer.cli.output import print_json, write_manifests
from glimmer.errors import InputError


class OutputFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


def _object_json(item: Loaded) -> dict[str, Any]:
    return {
        "kind": item.kind,
        "name": item.name,
        "file": item.source,
        "document": item.document,
        "line": item.line_of(""),
    }


def _error_json(error: InputError) -> dict[str, Any]:
    where = error.location
    return {
        "file": where.file,
        "document": where.document,
        "object": where.obj,
        "field": where.field,
        "line": where.line,
        "message": error.message,
    }


def _print_errors(errors: list[InputError]) -> None:
    # Plain writes, not the rich console: an error must stay on one line however long it is.
    for error in errors:
        print(f"error: {error}", file=sys.stderr)


def validate(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH", help="Files or folders of YAML/JSON resources; '-' reads stdin."
        ),
    ],
    output: Annotated[
        OutputFormat, typer.Option("--output", "-o", help="text (default) or json.")
    ] = OutputFormat.TEXT,
) -> None:
    """Check that every document in PATH... is a valid glimmer resource (burn-in, certification,
    Fleet: a Fleet is checked by every rule `glimmer fleet validate` applies).

    Exit 0 when all are valid; exit 2 when any is not, with one line per problem on stderr.
    """
    # The certification kinds, and the catalog their categories are checked against, load
    # only when files are read (--help stays free of glimmer.certify).
    import glimmer.certify.catalog.entries  # noqa: F401

    loaded, errors = collect_paths(paths)
    errors += silent_files(paths, loaded, errors)
    fleet_errors = fleet_problems(loaded)
    if fleet_errors:
        bad = {(e.location.file, e.location.document) for e in fleet_errors}
        loaded = [item for item in loaded if (item.source, item.document) not in bad]
        errors = [*errors, *fleet_errors]
    if output is OutputFormat.JSON:
        print_json(
            {
                "valid": not errors,
                "objects": [_object_json(item) for item in loaded],
                "errors": [_error_json(e) for e in errors],
            }
        )
    else:
        for item in loaded:
            print(f"ok  {item.ref}  {item.source}")
    _print_errors(errors)
    if errors:
        raise typer.Exit(2)


def crds(
    output_dir: Annotated[
        Path | None,
        typer.Option(
            "--output-dir",
            help="Write one <group>_<plural>.yaml file per CRD into this folder, not stdout.",
            file_okay=False,
        ),
    ] = None,
) -> None:
    """Print the CustomResourceDefinitions of the burn-in kinds as multi-document YAML."""
    objs = all_crds()
    write_manifests(objs, output_dir, crd_filename, crd_file_text, to_yaml(objs))


def register(app: typer.Typer) -> None:
    """Add this module's commands to the glimmer app."""
    app.command("validate")(validate)
    app.command("crds")(crds)
