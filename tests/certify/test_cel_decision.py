"""bench/cel_eval.py, the CEL decision of issue 17: the hand-written subset answers every
scenario 29/30 and §7.1 case as cel-go does, except the three divergences docs/dependencies.md
records. Only the subset is run here (the libraries are not dependencies); no figure is
compared with a time."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def _bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "cel_eval.py"
    spec = importlib.util.spec_from_file_location("bench_cel_eval", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve their module while the class is built
    spec.loader.exec_module(mod)
    return mod


bench = _bench()

# Optional selection is refused by the subset (the §7.1 defaults make it needless; both
# libraries refuse it too), and double * int is accepted where cel-go has no such overload.
KNOWN = [
    "health optional select .?: invalid (cel-go True)",
    "health optional select, absent key: invalid (cel-go False)",
    "threshold invalid: double * int: True (cel-go invalid)",
]


def test_the_subset_agrees_with_cel_go_but_for_the_recorded_divergences() -> None:
    ok, total, wrong = bench.fidelity(bench.subset_engine())
    assert wrong == KNOWN
    assert (ok, total) == (total - 3, len(bench.health_cases()) + len(bench.threshold_cases()))


def test_every_health_case_outcome_kind_is_exercised() -> None:
    wants = {c.want for c in bench.health_cases()}
    assert wants == {True, False, bench.INVALID, bench.ERROR}
    assert {c.want for c in bench.threshold_cases()} == {True, False, bench.INVALID}


def test_the_speed_figures_come_out_for_a_small_fleet() -> None:
    warm, cold = bench.speed(bench.subset_engine(), bench.fleet(2), repeat=1)
    assert warm > 0 and cold > 0
    assert bench.compile_speed(bench.subset_engine(), repeat=1) > 0
