"""``glimmer merge --results-dir DIR... [--nranks N] [--out FILE]``: the one verdict about a
collective run on bare metal, from every rank's record (§8.4).

Each ``--results-dir`` is read for ``ranks/rank-*.json`` and ``rank-*.json`` (a folder of
records copied together works as well as one results folder per host). The fold is
:mod:`glimmer.reports.rank_merge`'s; this module reads flags and files and writes text. The
merged envelope goes to ``--out`` (atomically) or to stdout; the summary line follows.

Exit codes are ``glimmer run``'s: 0 Passed, 1 Failed, 3 Error, and 2 for bad input — a missing,
duplicate or out-of-range rank, disagreeing rank counts, a malformed record — with one line
naming the files and ranks and nothing written. (§8.4 says 3 for those refusals; this project
keeps 2 for every input it refuses, docs/bare-metal.md says why.)
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from glimmer.api.run import BurnInRun
from glimmer.cli.output import console
from glimmer.cli.run_inputs import API_VERSION, NAMESPACE
from glimmer.contract.vocab import Phase
from glimmer.errors import InputError, Location
from glimmer.reports.folder import folder_problem, write_atomically
from glimmer.reports.rank_merge import Merged, merge
from glimmer.reports.rank_record import RANKS_FOLDER, RankRecord, read_record
from glimmer.sinks.envelope import RUN_PHASE_CHANGED, Transition, build_envelope
from glimmer.verdict import ResultView, count_results

EXIT_CODES = {Phase.PASSED: 0, Phase.FAILED: 1, Phase.ERROR: 3}
PATTERN = "rank-*.json"


def record_files(folders: list[Path]) -> list[Path]:
    """Every rank record under the folders given, in the order given, each file once."""
    found: dict[Path, None] = {}
    for folder in folders:
        if not folder.is_dir():
            raise InputError(f"--results-dir {folder}: not a folder")
        for place in (folder / RANKS_FOLDER, folder):
            found.update(dict.fromkeys(sorted(place.glob(PATTERN))))
    return list(found)


def merged_run(merged: Merged) -> BurnInRun:
    """The collective's run as the envelope describes it: named after rank 0's node, a fresh
    uid (as every bare-metal run), the results and counters of the merge."""
    counts = count_results(ResultView(r.kind, r.phase) for r in merged.results)
    root = merged.nodes[0]
    return BurnInRun.model_validate(
        {
            "apiVersion": API_VERSION,
            "kind": "BurnInRun",
            "metadata": {"name": f"merge-{root}", "namespace": NAMESPACE, "uid": str(uuid.uuid4())},
            "spec": {
                "profileRef": merged.profile or "group",
                "target": {"nodeNames": list(merged.nodes)},
            },
            "status": {
                "phase": merged.phase.value,
                "fingerprint": merged.fingerprint or None,
                "startedAt": merged.started_at,
                "finishedAt": merged.finished_at,
                "results": [
                    r.model_dump(mode="json", by_alias=True, exclude_none=True)
                    for r in merged.results
                ],
                "passed": counts.passed,
                "failed": counts.failed,
                "errored": counts.errored,
                "skipped": counts.skipped,
            },
        }
    )


def summary_lines(run: BurnInRun) -> list[str]:
    """``<phase> — N passed, N failed, N errored, N skipped``, then each result that did not
    pass with its message and violated gates (§8.5)."""
    status = run.status
    assert status is not None
    lines = [
        f"{status.phase.value} — {status.passed} passed, {status.failed} failed, "
        f"{status.errored} errored, {status.skipped} skipped"
    ]
    for result in status.results or ():
        if result.phase is Phase.PASSED:
            continue
        nodes = "+".join(result.nodes or ())
        lines.append(f"  {result.name} on {nodes} {result.phase.value}: {result.message or ''}")
        for v in result.violations or ():
            lines.append(f"    gate {v.index} {v.metric}: {v.reason or v.cause or ''}")
    return lines


def merge_cmd(
    results_dir: Annotated[
        list[Path],
        typer.Option(
            "--results-dir",
            metavar="DIR",
            help="A folder holding ranks/rank-*.json or rank-*.json; repeatable.",
        ),
    ],
    nranks: Annotated[
        int | None,
        typer.Option(help="The collective's rank count (default: the count the records agree on)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", metavar="FILE", help="Write the envelope here (default: stdout)."),
    ] = None,
) -> None:
    """Merge every Group rank's record into one verdict about the collective.

    Exit codes: 0 Passed, 1 Failed, 2 bad input (a missing, duplicate or out-of-range rank, a
    malformed record), 3 Error.
    """
    files = record_files(results_dir)
    records: list[RankRecord] = [read_record(path) for path in files]
    if out is not None:
        if out.is_dir():
            raise InputError(f"--out {out}: is a folder, not a file")
        problem = folder_problem(out.parent)
        if problem is not None:
            raise InputError(f"--out {out}: {out.parent} {problem}", Location())
    merged = merge(records, nranks)
    run = merged_run(merged)
    envelope = build_envelope(
        Transition(RUN_PHASE_CHANGED, merged.phase.value, run), sent_at=datetime.now(UTC)
    )
    text = json.dumps(envelope, indent=2) + "\n"
    lines = summary_lines(run)
    if out is None:
        print(text, end="")
        for line in lines:
            typer.echo(line, err=True)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)  # checked creatable above
        write_atomically(out, text)
        for line in lines:
            console.print(line, markup=False, soft_wrap=True)
        console.print(f"Envelope: {out}", markup=False, soft_wrap=True)
    raise typer.Exit(EXIT_CODES.get(merged.phase, 3))


def register(app: typer.Typer) -> None:
    """Add ``glimmer merge`` to the app."""
    app.command("merge")(merge_cmd)
