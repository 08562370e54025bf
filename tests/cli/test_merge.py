"""``glimmer merge``: every Group rank's record folded into one verdict about the collective, by
the Group combination the engine uses; refused (exit 2, naming files and ranks, nothing
written) unless the records are exactly ranks 0..n-1 of one count."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from glimmer.api.result import TestResult
from glimmer.api.threshold import Threshold
from glimmer.cli.app import main
from glimmer.contract.vocab import ParsedResult, Phase, RunnerVerdict, Scope
from glimmer.reports.rank_record import RankRecord, RankTest, rank_file_name, record_text

AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
GATE = Threshold.model_validate({"metric": "rankSum", "comparison": "Equal", "value": "3"})


def _declared(verdict: RunnerVerdict = RunnerVerdict.PASS, **metrics: str) -> ParsedResult:
    code = {"Pass": 0, "Fail": 1, "Skip": 2, "Error": 3}[verdict.value]
    marker = f"GROUP_EXCHANGE_{verdict.value.upper()}"
    return ParsedResult(verdict, code, dict(metrics or {"rankSum": "3"}), message=marker)


def _record(
    rank: int,
    nranks: int = 3,
    runner: ParsedResult | None = None,
    *,
    required: bool = True,
    gates: tuple[Threshold, ...] = (GATE,),
    profile: str = "collective",
) -> RankRecord:
    said = runner or _declared()
    result = TestResult(
        name="exchange",
        kind="custom",
        scope=Scope.GROUP,
        phase=Phase.PASSED if said.verdict is RunnerVerdict.PASS else Phase.FAILED,
        nodes=[f"r{rank}"],
        started_at=AT,
        finished_at=AT,
        metrics=dict(said.metrics),
        message=said.message,
    )
    return RankRecord(
        rank=rank,
        nranks=nranks,
        node=f"r{rank}",
        phase=result.phase,
        started_at=AT,
        finished_at=AT,
        tests=(RankTest(result, required, said, gates),),
        fingerprint={f"r{rank}": f"kernel=k{rank}"},
        note="",
        profile=profile,
    )


def _write(folder: Path, *records: RankRecord) -> Path:
    (folder / "ranks").mkdir(parents=True, exist_ok=True)
    for record in records:
        (folder / "ranks" / rank_file_name(record.rank)).write_text(record_text(record))
    return folder


def _merge(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["merge", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _dirs(*folders: Path) -> list[str]:
    return [arg for folder in folders for arg in ("--results-dir", str(folder))]


def test_all_ranks_passing_merge_into_one_passed_envelope_naming_every_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folders = [_write(tmp_path / f"h{i}", _record(i)) for i in range(3)]
    out = tmp_path / "merged.json"
    code, printed, _ = _merge(capsys, *_dirs(*folders), "--out", str(out))
    envelope = json.loads(out.read_text())
    assert code == 0 and "Passed — 1 passed, 0 failed, 0 errored, 0 skipped" in printed
    assert envelope["reason"] == "RunPhaseChanged" and envelope["phase"] == "Passed"
    [result] = envelope["results"]
    assert result["nodes"] == ["r0", "r1", "r2"] and result["scope"] == "Group"
    assert result["metrics"] == {"rankSum": "3"}
    assert "group of 3 (this verdict is about the COLLECTIVE" in result["message"]
    assert envelope["fingerprint"] == {"r0": "kernel=k0", "r1": "kernel=k1", "r2": "kernel=k2"}
    assert envelope["run"]["profile"] == "collective"


def test_one_rank_failing_fails_the_collective(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [_record(0), _record(1, runner=_declared(RunnerVerdict.FAIL)), _record(2)]
    code, out, _ = _merge(capsys, *_dirs(_write(tmp_path, *records)))
    envelope = json.loads(out)
    assert code == 1 and envelope["phase"] == "Failed"
    assert envelope["results"][0]["phase"] == "Failed"
    assert "rank 1 (r1) fail (exit 1)" in envelope["results"][0]["message"]


def test_a_metric_no_rank_reported_fails_its_gate_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [_record(i, runner=_declared(ranksReported="3")) for i in range(3)]
    code, out, _ = _merge(capsys, *_dirs(_write(tmp_path, *records)))
    [result] = json.loads(out)["results"]
    assert code == 1 and result["phase"] == "Failed"
    assert result["violations"][0]["metric"] == "rankSum"


def test_ranks_disagreeing_on_an_unclassified_metric_drop_it_and_its_gate_fails_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [_record(0), _record(1, runner=_declared(rankSum="4")), _record(2)]
    code, out, _ = _merge(capsys, *_dirs(_write(tmp_path, *records)))
    [result] = json.loads(out)["results"]
    assert code == 1 and result["phase"] == "Failed"
    assert "rankSum" in result["unmeasurable"] and "ranks disagreed" in result["message"]


def test_a_rank_that_declared_its_metric_unmeasurable_makes_the_gate_fail_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    na = ParsedResult(RunnerVerdict.PASS, 0, {}, frozenset({"rankSum"}), message="PASS")
    records = [_record(0), _record(1, runner=na), _record(2)]
    code, out, _ = _merge(capsys, *_dirs(_write(tmp_path, *records)))
    assert code == 1 and json.loads(out)["results"][0]["phase"] == "Failed"


def test_an_optional_tests_failure_leaves_the_run_passed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [_record(0, required=False), _record(1, runner=_declared(RunnerVerdict.FAIL),
               required=False), _record(2, required=False)]  # fmt: skip
    code, out, _ = _merge(capsys, *_dirs(_write(tmp_path, *records)))
    envelope = json.loads(out)
    assert code == 0 and envelope["phase"] == "Passed"
    assert envelope["results"][0]["phase"] == "Failed"


def test_records_side_by_side_in_one_folder_are_read_as_well(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(2):
        (tmp_path / f"rank-{i}.json").write_text(record_text(_record(i, nranks=2)))
    code, out, _ = _merge(capsys, "--results-dir", str(tmp_path))
    assert code == 0 and json.loads(out)["phase"] == "Passed"


def _refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> str:
    out = tmp_path / "never.json"
    code, _, err = _merge(capsys, *args, "--out", str(out))
    assert code == 2 and "Traceback" not in err
    assert not out.exists()  # nothing half-written
    return err


def test_a_missing_rank_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _write(tmp_path / "h", _record(0), _record(1))
    err = _refused(capsys, tmp_path, *_dirs(folder))
    assert "rank 2 of 3 missing" in err and "partial collective has no verdict" in err
    assert "rank-00.json" in err and "rank-01.json" in err


def test_a_rank_given_twice_is_refused_naming_both_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _write(tmp_path / "a", _record(0, nranks=2), _record(1, nranks=2))
    b = _write(tmp_path / "b", _record(1, nranks=2))
    err = _refused(capsys, tmp_path, *_dirs(a, b))
    assert "rank 1 is given twice" in err
    assert str(a / "ranks" / "rank-01.json") in err and str(b / "ranks" / "rank-01.json") in err


def test_records_disagreeing_on_the_rank_count_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _write(tmp_path / "h", _record(0, nranks=2), _record(1, nranks=3))
    err = _refused(capsys, tmp_path, *_dirs(folder))
    assert "disagree on the rank count" in err and "nranks 2" in err and "nranks 3" in err


def test_nranks_given_that_the_records_contradict_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _write(tmp_path / "h", _record(0, nranks=2), _record(1, nranks=2))
    err = _refused(capsys, tmp_path, *_dirs(folder), "--nranks", "3")
    assert "--nranks 3" in err and "nranks 2" in err


def test_a_rank_outside_the_count_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _write(tmp_path / "h", _record(0, nranks=2), _record(1, nranks=2))
    (folder / "ranks" / "rank-05.json").write_text(record_text(_record(5, nranks=2)))
    err = _refused(capsys, tmp_path, *_dirs(folder))
    assert "rank outside [0, 2)" in err and "rank-05.json holds rank 5" in err


def test_fewer_than_two_ranks_is_no_collective(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _write(tmp_path / "h", _record(0, nranks=1))
    err = _refused(capsys, tmp_path, *_dirs(folder))
    assert "at least 2 ranks" in err


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d.pop("nranks"), "field nranks"),
        (lambda d: d.update(rank="zero"), "field rank"),
        (lambda d: d.update(phase="Sideways"), "field phase"),
        (lambda d: d["results"][0]["runner"].update(verdict="Maybe"), "results[0].runner.verdict"),
        (lambda d: d["results"][0].update(phase=7), "results[0].phase"),
        (lambda d: d["results"][0]["thresholds"][0].pop("metric"), "results[0].thresholds[0]"),
    ],
)
def test_a_malformed_record_is_refused_naming_the_file_and_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: object, field: str
) -> None:
    folder = _write(tmp_path / "h", _record(0, nranks=2), _record(1, nranks=2))
    path = folder / "ranks" / "rank-01.json"
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data))
    err = _refused(capsys, tmp_path, *_dirs(folder))
    assert str(path) in err and field in err


def test_a_record_that_is_not_json_is_refused_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _write(tmp_path / "h", _record(0, nranks=2))
    (folder / "ranks" / "rank-01.json").write_text('{"rank": 1,')
    err = _refused(capsys, tmp_path, *_dirs(folder))
    assert "rank-01.json" in err and "not JSON" in err


def test_ranks_of_different_profiles_or_gates_are_not_one_collective(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = Threshold.model_validate({"metric": "rankSum", "comparison": "Equal", "value": "4"})
    folder = _write(tmp_path / "g", _record(0, nranks=2), _record(1, nranks=2, gates=(other,)))
    assert "different gates" in _refused(capsys, tmp_path, *_dirs(folder))
    folder = _write(tmp_path / "p", _record(0, nranks=2), _record(1, nranks=2, profile="x"))
    assert "did not run one profile" in _refused(capsys, tmp_path, *_dirs(folder))


def test_records_holding_no_group_result_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = [dataclasses.replace(_record(i, nranks=2), tests=()) for i in range(2)]
    err = _refused(capsys, tmp_path, *_dirs(_write(tmp_path / "h", *empty)))
    assert "hold no Group test result" in err


def test_the_envelope_goes_into_a_folder_made_for_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _write(tmp_path / "h", _record(0, nranks=2), _record(1, nranks=2))
    out = tmp_path / "new" / "deeper" / "merged.json"
    code, _, _ = _merge(capsys, *_dirs(folder), "--out", str(out))
    assert code == 0 and json.loads(out.read_text())["phase"] == "Passed"
