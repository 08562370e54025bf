"""``glimmer profiles``: the built-in profiles and tests with their gates, as text and JSON."""

from __future__ import annotations

import json

import pytest

from glimmer.cli.app import main
from glimmer.plan.builtin import builtin_profile, builtin_profile_names, builtin_tests


def _profiles(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["profiles", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_profiles_lists_every_built_in_profile_and_test_with_its_gates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _profiles(capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    for name in builtin_profile_names():
        assert any(line.startswith(f"  {name} (") for line in lines), name
    assert "  host-fault-counters: host-health, Node, 30s" in lines
    assert "    xidEvents Equal 0" in lines
    assert "    eccErrors Equal 0 (RequiredIfMeasurable)" in lines
    assert "  smoke (3 tests, failFast)" in lines


def test_profiles_as_json_carries_each_profiles_entries_and_each_tests_gates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _profiles(capsys, "-o", "json")
    assert code == 0
    found = json.loads(out)
    assert [p["name"] for p in found["profiles"]] == builtin_profile_names()
    assert {t["name"] for t in found["tests"]} == set(builtin_tests())
    smoke = builtin_profile("smoke")
    assert smoke is not None
    (listed,) = [p for p in found["profiles"] if p["name"] == "smoke"]
    assert [e["name"] for e in listed["tests"]] == [e.test_ref for e in smoke.spec.tests]
    (clock,) = [t for t in found["tests"] if t["name"] == "clock-smoke"]
    gates = builtin_tests()["clock-smoke"].thresholds or []
    assert [(g["metric"], g["comparison"], g["value"]) for g in clock["gates"]] == [
        (g.metric, g.comparison.value, g.value) for g in gates
    ]


def test_profiles_name_shows_that_one_and_an_unknown_name_is_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _profiles(capsys, "clock-smoke", "--output", "json")
    assert code == 0
    found = json.loads(out)
    assert found["profiles"] == [] and [t["name"] for t in found["tests"]] == ["clock-smoke"]
    code, out, err = _profiles(capsys, "clock-smok")
    assert code == 2 and out == ""
    assert err.startswith("error: NAME clock-smok: no built-in profile or test of that name")
    assert err.count("\n") == 1
