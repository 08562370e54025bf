"""``glimmer merge --results-dir DIR... [--nranks N] [--out FILE] [--sink SPEC...]``: the one
verdict about a collective run on bare metal, from every rank's record (§8.4).

Each ``--results-dir`` is read for ``ranks/rank-*.json`` and ``rank-*.json`` (a folder of
records copied together works as well as one results folder per host). The fold is
:mod:`glimmer.reports.rank_merge`'s; this module reads flags and files and writes text. The
merged envelope goes to ``--out`` (atomically) or to stdout; the summary line follows.

``--sink`` (and its state, secret and CA flags) are ``glimmer run``'s, built by the same
:func:`~glimmer.cli.run_inputs.sink_set_for`: the envelope is delivered once, under the CLI's
retry policy (§5.4/§5.5), after it was written, so a slow or dead sink never holds the verdict
back. A sink that does not take it is a ``warning:`` line naming it and never the exit code
(§8.5); what it is owed waits in the outbox for ``glimmer sink flush``.

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
from glimmer.cli.run_inputs import (
    API_VERSION,
    NAMESPACE,
    SinkFlags,
    sink_set_for,
)
from glimmer.cli.sink_options import SinkCa, SinkSecretEnv, SinkSecretFile, SinkState
from glimmer.contract.vocab import Phase
from glimmer.errors import InputError, Location
from glimmer.reports.folder import folder_problem, write_atomically
from glimmer.reports.rank_merge import Merged, merge
from glimmer.reports.rank_record import RANKS_FOLDER, RankRecord, read_record
from glimmer.sinks.config import FLAG_FORMS
from glimmer.sinks.envelope import RUN_PHASE_CHANGED, Transition, build_envelope
from glimmer.sinks.sinkset import SinkSet
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


def deliver(sinks: SinkSet, transition: Transition) -> list[str]:
    """Hand ``transition`` to every sink once; a ``warning:`` line for each sink that did not
    take it (none when all did). Never raises: the verdict is already written."""
    if sinks.deliver(transition):
        return []
    lines = []
    for ident in sinks.idents():
        error = sinks.states.get(ident)
        if error is None or not error.last_error:
            continue
        waits = ""
        if sinks.outbox.has(ident):  # retryable: queued, so a later flush can still send it
            where = sinks.outbox.path.parent if sinks.outbox.path is not None else None
            state = f" --sink-state {where}" if where is not None else ""
            waits = f"; it waits in the outbox: glimmer sink flush --sink {ident}{state}"
        lines.append(f"warning: sink {ident} did not take the envelope: {error.last_error}{waits}")
    # A sink's own bug is logged by the SinkSet and records no error: still say something.
    return lines or [f"warning: the envelope was not delivered to {', '.join(sinks.idents())}"]


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
    sink: Annotated[
        list[str] | None,
        typer.Option(
            "--sink",
            metavar="SPEC",
            help=f"Deliver the merged envelope: {FLAG_FORMS}; repeatable.",
        ),
    ] = None,
    sink_state: SinkState = None,
    sink_secret_file: SinkSecretFile = None,
    sink_secret_env: SinkSecretEnv = None,
    sink_ca: SinkCa = None,
) -> None:
    """Merge every Group rank's record into one verdict about the collective.

    Exit codes: 0 Passed, 1 Failed, 2 bad input, 3 Error.

    Bad input: a missing, duplicate or out-of-range rank, a malformed record, a bad sink flag.

    A sink that does not take the envelope is a warning, never an exit code.
    """
    flags = SinkFlags(tuple(sink or ()), sink_state, sink_secret_file, sink_secret_env, sink_ca)
    # Checked before any record is read: bad sink flags write nothing (the outbox is lazy).
    sinks = sink_set_for(flags, simulated=False)
    try:
        code = _merge(results_dir, nranks, out, sinks)
    finally:
        if sinks is not None:
            sinks.close()
    raise typer.Exit(code)


def _merge(
    results_dir: list[Path], nranks: int | None, out: Path | None, sinks: SinkSet | None
) -> int:
    """The merge itself, as an exit code: read, fold, write, then deliver."""
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
    # One build time for both: the file written and the envelope delivered are the same bytes.
    at = datetime.now(UTC)
    transition = Transition(RUN_PHASE_CHANGED, merged.phase.value, run, at=at)
    envelope = build_envelope(transition, sent_at=at)
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
    for warning in deliver(sinks, transition) if sinks is not None else ():
        typer.echo(warning, err=True)
    return EXIT_CODES.get(merged.phase, 3)


def register(app: typer.Typer) -> None:
    """Add ``glimmer merge`` to the app."""
    app.command("merge")(merge_cmd)
