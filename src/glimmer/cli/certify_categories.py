"""``glimmer certify list-categories``: every catalog entry (specs/certify.md §5, §8), offline:
its domain/variant, what it runs, at which test scales, what it measures.

Formatting only: the entries and their data are :mod:`glimmer.certify.catalog`'s.
"""

from __future__ import annotations

import posixpath
from typing import Annotated, Any

import typer

from glimmer.api.certify.options import TestScale
from glimmer.certify.catalog.entries import Entry, list_entries, measured_keys
from glimmer.cli.certify_run import Output
from glimmer.cli.output import print_json

# The domains whose entries take the testScale option (§2.2: communication entries only); the
# others run one single-node job per node (perNode) or one job of nodesPerJob nodes.
TEST_SCALE_DOMAINS = frozenset({"communication"})
PER_NODE = "per-node"
NODES_PER_JOB = "nodes-per-job"


def _trainer(entry: Entry) -> dict[str, Any]:
    spec = (entry.data.get("jobTemplate") or {}).get("spec") or {}
    trainer = ((spec.get("workload") or {}).get("trainJob") or {}).get("trainer")
    return trainer if isinstance(trainer, dict) else {}


def runs(entry: Entry) -> str:
    """The program a job of the entry runs: the launcher and the entry's binary, or the words
    of its command before the first option (``mpirun all_reduce_perf_mpi``, ``dcgmi diag``)."""
    command = [str(c) for c in _trainer(entry).get("command") or ()]
    if command[:1] == ["timeout"]:
        command = command[2:]  # a deadline wrapper, not the program
    words = []
    for word in command:
        if word.startswith("-"):
            break
        words.append(posixpath.basename(word))
    binary = (entry.data.get("values") or {}).get("binary")
    if binary:
        words.append(str(binary))
    return " ".join(words) or entry.framework


def test_scales(entry: Entry) -> list[str]:
    """The scales an entry runs at: the testScale values, or how it spreads without one."""
    if entry.domain in TEST_SCALE_DOMAINS:
        return [s.value for s in TestScale]
    return [PER_NODE] if entry.per_node else [NODES_PER_JOB]


def entry_doc(entry: Entry) -> dict[str, Any]:
    return {
        "ref": entry.ref,
        "domain": entry.domain,
        "variant": entry.variant,
        "description": str(entry.data.get("description", "")),
        "framework": entry.framework,
        "runs": runs(entry),
        "image": str(entry.data.get("image", "")),
        "testScales": test_scales(entry),
        "minGPUs": entry.min_gpus,
        "timeoutPerJob": entry.timeout_per_job,
        "measures": sorted(measured_keys(entry)),
    }


def list_categories(
    output: Annotated[
        Output, typer.Option("--output", "-o", help="table (default) or json.")
    ] = Output.TABLE,
) -> None:
    """List the catalog's categories: what each runs, at which scales, what it measures.

    Thresholds can be set on the keys a category measures."""
    docs = [entry_doc(e) for e in list_entries()]
    if output is Output.JSON:
        print_json(docs)
        return
    head = ("CATEGORY", "RUNS", "TEST SCALES", "MEASURES")
    rows = [
        (d["ref"], d["runs"], ", ".join(d["testScales"]), ", ".join(d["measures"]) or "-")
        for d in docs
    ]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    for row in [head, *rows]:
        typer.echo(
            "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3]
        )
    typer.echo("")
    for d in docs:
        typer.echo(f"{d['ref']}: {d['description']}")
