"""One Group rank's record on bare metal (§8.3): ``ranks/rank-NN.json``, written by the rank's
``glimmer run --rank`` and read by ``glimmer merge`` (§8.4). One module holds the shape both
ways, so the writer and the reader cannot drift apart.

A rank has no verdict of its own: the collective's is made by merging every rank. So each
result carries, beside the rank's own settled result, what its runner declared (``runner``:
verdict, exit code, metrics, unmeasurable names, last words — exactly the parsed result the
engine harvested) and the gates it was written with (``thresholds``). The merge folds the
runners' declarations through the Group combination and judges the elected metrics by those
gates, as the engine's Group unit does; a rank's own pass or fail of a gate on its own readings
never decides the collective.

Reading refuses a malformed record with an InputError naming the file and the field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from glimmer.api.result import TestResult
from glimmer.api.threshold import Threshold
from glimmer.contract.vocab import ParsedResult, Phase, RunnerVerdict
from glimmer.errors import InputError, Location

RANKS_FOLDER = "ranks"


def rank_file_name(rank: int) -> str:
    """``rank-NN.json`` (two digits at least, so a listing sorts by rank up to 100)."""
    return f"rank-{rank:02d}.json"


@dataclass(frozen=True)
class RankTest:
    """One test as a rank ran it."""

    result: TestResult
    required: bool
    runner: ParsedResult | None  # None: no runner declared anything (the machinery ended it)
    thresholds: tuple[Threshold, ...] = ()


@dataclass(frozen=True)
class RankRecord:
    """A rank's half of a collective run."""

    rank: int
    nranks: int
    node: str
    phase: Phase
    started_at: datetime | None
    finished_at: datetime | None
    tests: tuple[RankTest, ...]
    fingerprint: Mapping[str, str]
    note: str
    profile: str = ""  # the profile the rank ran (the merged run names it)
    source: str = ""  # the file it was read from ("" when built here)


def _time(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at is not None else None


def runner_json(parsed: ParsedResult) -> dict[str, Any]:
    return {
        "verdict": parsed.verdict.value,
        "exitCode": parsed.exit_code,
        "metrics": dict(parsed.metrics),
        "unmeasurable": sorted(parsed.unmeasurable),
        "invalidNames": list(parsed.invalid_names),
        "message": parsed.message,
        "undeclaredSkip": parsed.undeclared_skip,
    }


def record_json(record: RankRecord) -> dict[str, Any]:
    """The record as the file holds it."""
    results = []
    for test in record.tests:
        entry = test.result.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude={"attempts"}
        )
        entry["runner"] = runner_json(test.runner) if test.runner is not None else None
        entry["thresholds"] = [
            t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in test.thresholds
        ]
        results.append(entry)
    return {
        "rank": record.rank,
        "nranks": record.nranks,
        "node": record.node,
        "phase": record.phase.value,
        "startedAt": _time(record.started_at),
        "finishedAt": _time(record.finished_at),
        "results": results,
        "required": {t.result.name: t.required for t in record.tests},
        "fingerprint": dict(record.fingerprint),
        "note": record.note,
        "profile": record.profile,
    }


def record_text(record: RankRecord) -> str:
    return json.dumps(record_json(record), indent=2, sort_keys=False) + "\n"


# --- reading -----------------------------------------------------------------------------


class _Refused(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def _need(data: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    field = f"{where}{key}"
    if key not in data:
        raise _Refused(field, "missing")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        name = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise _Refused(field, f"is {type(value).__name__}, not {name}")
    return value


def _parse_time(value: Any, field: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Refused(field, "is not an RFC 3339 time")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise _Refused(field, f"{value!r} is not an RFC 3339 time") from None


def _runner(data: Any, where: str) -> ParsedResult | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise _Refused(where.rstrip("."), "is not an object")
    verdict = _need(data, "verdict", str, where)
    try:
        declared = RunnerVerdict(verdict)
    except ValueError:
        raise _Refused(f"{where}verdict", f"{verdict!r} is not Pass, Fail, Skip or Error") from None
    metrics = _need(data, "metrics", dict, where)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metrics.items()):
        raise _Refused(f"{where}metrics", "holds a value that is not a string")
    return ParsedResult(
        verdict=declared,
        exit_code=_need(data, "exitCode", int, where),
        metrics=dict(metrics),
        unmeasurable=frozenset(str(k) for k in data.get("unmeasurable") or ()),
        invalid_names=tuple(str(k) for k in data.get("invalidNames") or ()),
        message=str(data.get("message") or ""),
        undeclared_skip=bool(data.get("undeclaredSkip")),
    )


def _test(data: Any, index: int, required: Mapping[str, Any]) -> RankTest:
    where = f"results[{index}]."
    if not isinstance(data, dict):
        raise _Refused(where.rstrip("."), "is not an object")
    body = {k: v for k, v in data.items() if k not in ("runner", "thresholds")}
    try:
        result = TestResult.model_validate(body)
    except ValidationError as error:
        first = error.errors()[0]
        path = ".".join(str(p) for p in first["loc"])
        raise _Refused(f"{where}{path}".rstrip("."), first["msg"]) from None
    gates = data.get("thresholds") or []
    if not isinstance(gates, list):
        raise _Refused(f"{where}thresholds", "is not a list")
    thresholds = []
    for i, gate in enumerate(gates):
        try:
            thresholds.append(Threshold.model_validate(gate))
        except ValidationError as error:
            raise _Refused(f"{where}thresholds[{i}]", error.errors()[0]["msg"]) from None
    needed = required.get(result.name, True)
    if not isinstance(needed, bool):
        raise _Refused(f"required.{result.name}", "is not true or false")
    return RankTest(
        result, needed, _runner(data.get("runner"), f"{where}runner."), tuple(thresholds)
    )


def parse_record(data: Any, source: str) -> RankRecord:
    """The record in ``data`` (read from ``source``); InputError naming the file and field."""
    try:
        if not isinstance(data, dict):
            raise _Refused("", "is not a JSON object (a rank record)")
        rank = _need(data, "rank", int, "")
        nranks = _need(data, "nranks", int, "")
        node = _need(data, "node", str, "")
        phase_text = _need(data, "phase", str, "")
        try:
            phase = Phase(phase_text)
        except ValueError:
            raise _Refused("phase", f"{phase_text!r} is not a phase") from None
        required = data.get("required") or {}
        if not isinstance(required, dict):
            raise _Refused("required", "is not an object")
        results = _need(data, "results", list, "")
        tests = tuple(_test(item, i, required) for i, item in enumerate(results))
        fingerprint = data.get("fingerprint") or {}
        if not isinstance(fingerprint, dict) or not all(
            isinstance(v, str) for v in fingerprint.values()
        ):
            raise _Refused("fingerprint", "is not an object of strings")
        return RankRecord(
            rank=rank,
            nranks=nranks,
            node=node,
            phase=phase,
            started_at=_parse_time(data.get("startedAt"), "startedAt"),
            finished_at=_parse_time(data.get("finishedAt"), "finishedAt"),
            tests=tests,
            fingerprint=dict(fingerprint),
            note=str(data.get("note") or ""),
            profile=str(data.get("profile") or ""),
            source=source,
        )
    except _Refused as refused:
        raise InputError(
            f"not a rank record: {refused.message}", _at(source, refused.field)
        ) from None


def _at(source: str, field: str) -> Location:
    return Location(file=source, field=field or None)


def read_record(path: Path) -> RankRecord:
    """The rank record in the file ``path``; InputError naming the file (and field)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot be read: {error}", Location(file=str(path))) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"not JSON: {error.msg} (line {error.lineno})", Location(file=str(path))
        ) from None
    return parse_record(data, str(path))
