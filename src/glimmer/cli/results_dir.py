"""``--results-dir DIR`` of ``glimmer run --backend local`` (§8.3): what one host's run leaves
for people and for ``glimmer merge``, every file written atomically (temporary file + rename)
once the run has settled. The folder is checked before the run starts, so bad input writes
nothing::

    run.json                              node, phase, startedAt, finishedAt
    raw/<execution>.log                   each execution's log (stdout and stderr)
    envelopes/001-RunPhaseChanged.json    a normal run or a Pair client: the one verdict
    sidecar/server-record.json            a Pair server: a record, never a verdict
    ranks/rank-NN.json                    a Group rank: its half, for glimmer merge

The envelope is the §5.3 envelope the sinks get (one assembler), its Pair results naming the
link ``[server, client]``. A server's record and a rank's record are never delivered.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.cli.local_run import LocalRun
from glimmer.contract.vocab import ParsedResult, Phase, Scope
from glimmer.engine.backend import ExecutionIndex
from glimmer.engine.harvest import harvest_execution
from glimmer.plan.halves import GroupHalf, PairHalf, relabel
from glimmer.reports.findings import plan_of
from glimmer.reports.folder import write_atomically
from glimmer.reports.rank_record import (
    RANKS_FOLDER,
    RankRecord,
    RankTest,
    rank_file_name,
    record_text,
)
from glimmer.sinks.envelope import RUN_PHASE_CHANGED, Transition, build_envelope, result_entry

RUN_FILE = "run.json"
RAW_FOLDER = "raw"
ENVELOPE_FILE = "envelopes/001-RunPhaseChanged.json"
SERVER_RECORD_FILE = "sidecar/server-record.json"
SERVER_NOTE = (
    "the server's half of a link: a record of what its runner did, not a verdict; the link's "
    "verdict is the client's envelope"
)


def _time(at: datetime | None) -> str | None:
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if at is not None else None


def _json(data: Any) -> str:
    return json.dumps(data, indent=2) + "\n"


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, text)
    return path


def _phase(run: BurnInRun) -> Phase:
    return run.status.phase if run.status is not None else Phase.PENDING


def _results(run: BurnInRun) -> list[TestResult]:
    return list(run.status.results or ()) if run.status is not None else []


def _runner(result: TestResult, index: ExecutionIndex, local: LocalRun) -> ParsedResult | None:
    """What the result's last attempt's runner declared, harvested as the engine harvests it;
    None when that execution is gone or never ended (the machinery decided the attempt)."""
    attempts = result.attempts or ()
    name = attempts[-1].pod_name if attempts else None
    execution = index.get(name) if name else None
    if execution is None or execution.live:
        return None
    return harvest_execution(local.backend, execution).parsed


def _rank_record(local: LocalRun, half: GroupHalf, run: BurnInRun, index: ExecutionIndex) -> str:
    plan = plan_of(run)
    planned = {t.name: t for t in plan.tests} if plan is not None else {}
    groups = set(local.halved.of_scope(Scope.GROUP))
    tests = []
    others = 0
    for result in _results(run):
        test = planned.get(result.name)
        if result.name not in groups or test is None:
            others += 1
            continue
        gates = tuple(test.spec.thresholds or ())
        runner = _runner(result, index, local)
        tests.append(RankTest(result, test.required, runner, gates))
    note = (
        f"rank {half.rank} of {half.nranks}: one rank's half of a collective, not a verdict; "
        "glimmer merge of every rank's record gives the collective's"
    )
    if others:
        note += f" ({others} other result(s) of this run are not part of the collective)"
    status = run.status
    prints = (status.fingerprint if status is not None else None) or {}
    record = RankRecord(
        rank=half.rank,
        nranks=half.nranks,
        node=local.node,
        phase=_phase(run),
        started_at=status.started_at if status is not None else None,
        finished_at=status.finished_at if status is not None else None,
        tests=tuple(tests),
        fingerprint={k: v for k, v in prints.items() if k == local.node},
        note=note,
        profile=run.spec.profile_ref,
    )
    return record_text(record)


def _server_record(half: PairHalf, local: LocalRun, run: BurnInRun) -> str:
    return _json(
        {
            "role": "server",
            "node": local.node,
            "peerNode": half.peer_node,
            "phase": _phase(run).value,
            "note": SERVER_NOTE,
            "results": [result_entry(r) for r in _results(run)],
        }
    )


def _envelope(run: BurnInRun) -> str:
    plan = plan_of(run)
    transition = Transition(
        reason=RUN_PHASE_CHANGED,
        key=_phase(run).value,
        run=run,
        baseline=bool(plan.baseline) if plan is not None else False,
        sinks=tuple(plan.sinks or ()) if plan is not None else (),
    )
    return _json(build_envelope(transition, sent_at=datetime.now(UTC)))


def write_results(folder: Path, local: LocalRun, final: BurnInRun) -> Path:
    """Write the results folder of the settled run ``final``; the file that says what this
    host's run was (the envelope, the server's record or the rank's record)."""
    namespace = final.metadata.namespace or "default"
    index = local.backend.executions(namespace, final.name, final.metadata.uid or "")
    for execution in index:
        local.backend.keep_log(namespace, execution.name)
    (folder / RAW_FOLDER).mkdir(parents=True, exist_ok=True)
    status = final.status
    run_file = {
        "node": local.node,
        "phase": _phase(final).value,
        "startedAt": _time(status.started_at if status is not None else None),
        "finishedAt": _time(status.finished_at if status is not None else None),
    }
    labelled = relabel(final, local.halved, local.half)
    half = local.half
    if isinstance(half, GroupHalf):
        name = f"{RANKS_FOLDER}/{rank_file_name(half.rank)}"
        main = _write(folder, name, _rank_record(local, half, labelled, index))
    elif isinstance(half, PairHalf) and half.role == "server":
        main = _write(folder, SERVER_RECORD_FILE, _server_record(half, local, labelled))
    else:
        main = _write(folder, ENVELOPE_FILE, _envelope(labelled))
    _write(folder, RUN_FILE, _json(run_file))
    return main
