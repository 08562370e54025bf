"""bench/scale_table.py, the issue 12 table: its certify case finds the fault it plants, a child's
CPU and memory are its own, ratios are judged against their targets, and cases over
``--max-nodes`` are left out and said to be. No figure here is compared with a time."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "scale_table.py"
    spec = importlib.util.spec_from_file_location("bench_scale_table", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve their module while the class is built
    spec.loader.exec_module(mod)
    return mod


bench = _bench()


def test_the_certify_case_names_the_node_its_fault_is_planted_on(tmp_path: Path) -> None:
    glimmer = str(Path(sys.executable).with_name("glimmer"))
    argv, host = bench.certify_case(tmp_path, 64, glimmer)
    got = bench.measure(argv, timeout=300.0)
    assert not got.timed_out and got.rc == 1, got.out[-2000:]
    assert bench.outcome(got, bench._certify_note(host)) == f"FAILED, {host} named"
    assert got.cpu_s > 0 and got.rss_bytes > 10_000_000  # the child's own, a Python's worth


def test_a_certify_run_that_names_another_node_is_a_failed_case(tmp_path: Path) -> None:
    glimmer = str(Path(sys.executable).with_name("glimmer"))
    argv, _ = bench.certify_case(tmp_path, 64, glimmer)
    got = bench.measure(argv, timeout=300.0)
    assert bench.outcome(got, bench._certify_note("hgx-su000-node-0000")).startswith("failed")


def test_a_case_past_its_cpu_limit_is_killed_and_reported() -> None:
    got = bench.measure([sys.executable, "-c", "while True: pass"], timeout=0.5)
    assert got.timed_out and got.cpu_s >= 0.5
    assert bench.outcome(got, bench._version_note).startswith("failed: stopped after")


def _row(cpu: float) -> Any:
    return bench.Row("c", bench.Measured(cpu, cpu, 1, 0, "ok"), "ok")


@pytest.mark.parametrize(("small", "big", "met"), [(10.0, 44.0, "yes"), (10.0, 44.5, "NO")])
def test_a_ratio_row_shows_the_figure_the_target_and_whether_it_is_met(
    small: float, big: float, met: str
) -> None:
    base, row = _row(small), _row(big)
    bench.ratio_check(row, base, "per 4x nodes", bench.RATIO_TARGET)
    assert (row.figure, row.target, row.met) == (
        f"per 4x nodes: {big / small:.3f}x",
        "<= 4.4x",
        met,
    )


def test_a_ratio_over_a_left_out_case_has_no_figure(capsys: pytest.CaptureFixture[str]) -> None:
    base, row = bench.Row("small", None, "over --max-nodes 1,024"), _row(40.0)
    bench.ratio_check(row, base, "per 4x nodes", bench.RATIO_TARGET)
    assert (row.figure, row.met) == ("per 4x nodes: -", "-")
    bench.print_table([base, row])
    out = capsys.readouterr().out
    assert "left out (over --max-nodes 1,024)" in out and "per 4x nodes: -" in out


def test_the_reference_loop_does_the_same_work_on_every_machine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(bench, "REFERENCE_LOOPS", 1000)
    expected = sum(len(f"node-{i:05d}") + i % 7 for i in range(1000))
    assert bench.child_reference() == bench.child_reference() == f"checksum {expected}"


def _case(name: str, nodes: int = 0) -> Any:
    return bench.Case(name, nodes, [name], bench._engine_note)


def _measured(cpu: float, rc: int = 0) -> Any:
    return bench.Measured(cpu, cpu, 1, rc, "Passed, 1 passes")


def test_a_case_shows_its_try_of_least_cpu_among_those_that_ended_well() -> None:
    row = bench.best_of(_case("c"), [_measured(5.0), _measured(2.0, rc=1), _measured(4.0)])
    assert row.got is not None and row.got.cpu_s == 4.0  # the failed try is no figure
    assert row.note == "Passed, 1 passes; best of 3 (5.00, 2.00, 4.00 s)"


def test_a_case_with_no_try_that_ended_well_shows_the_last_failure() -> None:
    row = bench.best_of(_case("c"), [_measured(2.0, rc=1), _measured(3.0, rc=1)])
    assert row.got is not None and row.got.cpu_s == 3.0
    assert row.note.startswith("failed: rc 1") and bench.cpu_of(row) is None


def test_the_cases_run_round_by_round_and_the_big_ones_are_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []
    cpu = iter([3.0, 1.0, 2.0, 4.0])

    def measure(argv: list[str], timeout: float) -> Any:
        ran.append(argv[0])
        return _measured(next(cpu))

    monkeypatch.setattr(bench, "measure", measure)
    cases = [_case("a"), _case("b"), _case("big", nodes=4096)]
    got = bench.run_rounds(cases, repeat=2, timeout=10.0, limit=1024)
    assert ran == ["a", "b", "a", "b"]  # each case once a round, not all its tries in a row
    assert [got[n].got.cpu_s for n in ("a", "b")] == [2.0, 1.0]
    assert got["big"].got is None and got["big"].note == "over --max-nodes 1,024"
