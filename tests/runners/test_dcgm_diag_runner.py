"""dcgm-diag: the four captures of conformance/dcgm-diag/ map to the verdicts §9.9's order
gives, through the real program (a dcgmi stand-in on PATH prints them) and through the pure
verdict function; the level ladder, the parameters, the field deltas; Error without DCGM."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from real_runner import FIXTURES, Ran, assert_contract, run_runner

from glimmer.runners import dcgm_diag
from glimmer.runners.dcgm_fields import fold, parse_dmon
from glimmer.runners.dcgm_verdict import decide, read_document
from glimmer.runners.outcome import ConfigError
from glimmer.runners.settings import Settings

CAPTURES = {
    # software "fails" only on persistence mode (DCGM error id 29), which is excused: a warning
    "gb10-level1.json": (0, "Pass"),
    # memory and pcie declined by DCGM's per-SKU allowlist: not run is Error, not a pass
    "gb10-level2-partial-skip.json": (3, "Error"),
    "gb10-level2-plugins-gated.json": (3, "Error"),
    # with BURNIN_DCGM_ALLOW=memory,pcie both ran and passed
    "gb10-level2-plugins-allowed.json": (0, "Pass"),
}


def run_dcgm(tmp_path: Path, capture: Path | None = None, **env: str) -> Ran:
    base = {
        "PATH": f"{FIXTURES / 'dcgm-diag'}:{os.environ['PATH']}",
        "FAKE_DCGMI_LOG": str(tmp_path / "dcgmi.log"),
        "FAKE_DCGMI_CAPTURE": str(capture or ""),
        "BURNIN_DCGM_HOSTENGINE_ADDRESS": "127.0.0.1:5555",
        "BURNIN_DURATION_SECONDS": "120",
    }
    return run_runner("dcgm-diag", {**base, **env})


@pytest.mark.parametrize(("name", "expected"), sorted(CAPTURES.items()))
def test_each_conformance_capture_gives_its_verdict_through_the_program(
    shared_dir: Path, tmp_path: Path, name: str, expected: tuple[int, str]
) -> None:
    ran = run_dcgm(tmp_path, shared_dir / "conformance" / "dcgm-diag" / name)
    assert_contract(ran)
    assert (ran.exit_code, ran.parsed.verdict.value) == expected, ran.stdout
    m = ran.parsed.metrics
    assert m["diagTestsFailed"] == "0"
    assert m["devicesVisible"] == "1"
    assert m["driverVersion"] == "580.82.09"
    assert m["diagLevel"] == "2" and m["diagLevelSource"] == "derived"  # 120 s fits level 2
    assert m["testsWarned"] == "1"  # the excused persistence-mode finding stays on the record
    if expected[0] == 3:
        assert (m["testsSkipped"], m["testsRun"]) == ("2", "1")  # a partial skip is not run
        assert "memory" in ran.marker and "BURNIN_DCGM_ALLOW" in ran.marker


@pytest.mark.parametrize(("name", "expected"), sorted(CAPTURES.items()))
def test_each_conformance_capture_gives_its_verdict_in_the_verdict_function(
    shared_dir: Path, name: str, expected: tuple[int, str]
) -> None:
    text = (shared_dir / "conformance" / "dcgm-diag" / name).read_text()
    # dcgmi exits non-zero when a subtest reports Fail, excused or not.
    outcome = decide(read_document(text), text, 226, timed_out=False)
    assert (outcome.exit_code, outcome.verdict.value) == expected


def test_dcgmi_gets_the_level_and_the_allowed_plugins(shared_dir: Path, tmp_path: Path) -> None:
    capture = shared_dir / "conformance" / "dcgm-diag" / "gb10-level2-plugins-allowed.json"
    ran = run_dcgm(tmp_path, capture, BURNIN_DCGM_ALLOW="memory,pcie", BURNIN_DCGM_LEVEL="medium")
    assert ran.exit_code == 0
    argv = (tmp_path / "dcgmi.log").read_text().split()
    assert argv == ["diag", "--host", "127.0.0.1:5555", "-r", "2", "-j",
                    "-p", "memory.is_allowed=true;pcie.is_allowed=true"]  # fmt: skip
    m = ran.parsed.metrics
    assert m["diagParams"] == "memory.is_allowed=true;pcie.is_allowed=true"
    assert (m["diagLevelSource"], m["diagTests"]) == ("env", "software,memory,pcie")
    assert m["dcgmVersion"] == "4.5.2"


def test_fields_are_sampled_and_counters_reported_as_deltas(
    shared_dir: Path, tmp_path: Path
) -> None:
    capture = shared_dir / "conformance" / "dcgm-diag" / "gb10-level1.json"
    ran = run_dcgm(tmp_path, capture, FAKE_DCGMI_REPLAY_STEP="2")
    m = ran.parsed.metrics
    assert m["sampleCount"] == "2"  # before and after (the diag is shorter than 5 s)
    assert m["pcieReplayErrors"] == "2"
    assert m["lastXidCode"] == "79"  # a code as read, never a difference of codes
    assert m["gpuTempC"] == "41"
    assert m["counterBaselineReset"] == "false"
    assert "remappedRows" not in m and "remappedRows" not in ran.parsed.unmeasurable  # N/A read


def test_a_counter_going_backwards_is_unmeasurable_never_zero(
    shared_dir: Path, tmp_path: Path
) -> None:
    capture = shared_dir / "conformance" / "dcgm-diag" / "gb10-level1.json"
    ran = run_dcgm(tmp_path, capture, FAKE_DCGMI_RESET="1")
    assert_contract(ran)
    assert "pcieReplayErrors" in ran.parsed.unmeasurable
    assert ran.parsed.metrics["counterBaselineReset"] == "true"


def test_a_timeout_is_an_error(shared_dir: Path, tmp_path: Path) -> None:
    capture = shared_dir / "conformance" / "dcgm-diag" / "gb10-level1.json"
    ran = run_dcgm(tmp_path, capture, FAKE_DCGMI_SLEEP="5", BURNIN_DCGM_TIMEOUT_SECONDS="1")
    assert_contract(ran)
    assert ran.exit_code == 3
    assert "timed out" in ran.marker
    assert ran.parsed.metrics["dcgmiExitCode"] == "-1"


def test_unsupported_prose_without_json_skips(tmp_path: Path) -> None:
    ran = run_dcgm(tmp_path, FAKE_DCGMI_TEXT="Error: This GPU is not supported by DCGM",
                   FAKE_DCGMI_EXIT="1")  # fmt: skip
    assert_contract(ran)
    assert ran.exit_code == 2
    assert ran.parsed.verdict.value == "Skip"


def test_missing_dcgmi_is_an_error_naming_the_tool_and_package(tmp_path: Path) -> None:
    ran = run_runner("dcgm-diag", {"PATH": str(tmp_path)})
    assert_contract(ran)
    assert ran.exit_code == 3
    assert ran.marker.startswith("DCGM_DIAG_ERROR: dcgmi not found on PATH")
    assert "datacenter-gpu-manager-4-core" in ran.marker


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_a_loopback_hostengine_is_started_for_the_run_and_stopped_after(
    shared_dir: Path, tmp_path: Path
) -> None:
    # One test for both halves: each needs port 5555 to itself.
    assert not _listening(dcgm_diag.PORT)
    bin_dir = tmp_path / "bin"  # dcgmi without its hostengine
    bin_dir.mkdir()
    os.symlink(FIXTURES / "dcgm-diag" / "dcgmi", bin_dir / "dcgmi")
    ran = run_runner(
        "dcgm-diag", {"PATH": f"{bin_dir}:/usr/bin:/bin", "FAKE_DCGMI_LOG": str(tmp_path / "l")}
    )
    assert_contract(ran)
    assert ran.exit_code == 3
    assert ran.marker.startswith("DCGM_DIAG_ERROR: nv-hostengine not found")

    capture = shared_dir / "conformance" / "dcgm-diag" / "gb10-level1.json"
    env = {"BURNIN_DCGM_HOSTENGINE_ADDRESS": "", "FAKE_HOSTENGINE_LOG": str(tmp_path / "he")}
    ran = run_dcgm(tmp_path, capture, **env)
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout
    assert (tmp_path / "he").read_text().split() == ["-n", "-b", "127.0.0.1", "-p", "5555"]
    assert "--host 127.0.0.1:5555" in (tmp_path / "dcgmi.log").read_text()
    assert not _listening(dcgm_diag.PORT)  # no hostengine left behind


# ---- the verdict order, one rule each ----------------------------------------------------------


def _doc(*tests: tuple[str, str, list[int]]) -> str:
    import json

    body = [
        {"name": name, "results": [{"entity_id": 0, "status": status,
                                    "warnings": [{"error_id": i, "warning": f"id {i}"}
                                                 for i in ids]}]}
        for name, status, ids in tests
    ]  # fmt: skip
    return json.dumps({"DCGM Diagnostic": {"test_categories": [{"tests": body}]}})


def _verdict(text: str, exit_code: int = 0, timed_out: bool = False) -> str:
    return decide(read_document(text), text, exit_code, timed_out).verdict.value


def test_the_verdict_order() -> None:
    assert _verdict(_doc(("pcie", "Pass", [])), timed_out=True) == "Error"
    assert _verdict("dcgmi: GPU is not supported") == "Skip"
    assert _verdict('{"broken": not supported') == "Error"  # unparsed is not skipped
    assert _verdict('{"DCGM Diagnostic": {"test_categories": []}} not supported') == "Error"
    assert _verdict(_doc(("memory", "Skip", []), ("pcie", "Skip", []))) == "Skip"
    assert _verdict(_doc(("memory", "Fail", [50]), ("pcie", "Skip", []))) == "Fail"
    assert _verdict(_doc(("memory", "Pass", []), ("pcie", "Skip", []))) == "Error"
    assert _verdict(_doc(("memory", "Pass", []), ("pcie", "Not Run", []))) == "Error"
    assert _verdict(_doc(("memory", "Pass", [])), exit_code=1) == "Error"
    assert _verdict(_doc(("memory", "Warn", [])), exit_code=0) == "Pass"
    assert _verdict(_doc(("software", "Fail", [29])), exit_code=226) == "Pass"


def test_only_allowlisted_error_ids_are_excused() -> None:
    # A finding is excused by its id alone, never by severity or category (DCGM_FR_ABORTED).
    assert _verdict(_doc(("software", "Fail", [29, 101]))) == "Fail"
    assert _verdict(_doc(("software", "Fail", []))) == "Fail"


# ---- the level ladder and the parameters ------------------------------------------------------


LADDER = [(30, 1), (60, 1), (119, 1), (120, 2), (600, 2), (900, 3), (3599, 3), (3600, 4)]


@pytest.mark.parametrize(("duration", "level"), LADDER)
def test_the_level_is_the_deepest_whose_budget_fits(duration: int, level: int) -> None:
    assert dcgm_diag.level_for(duration) == level


def test_a_named_level_is_kept_even_when_the_duration_is_shorter() -> None:
    plan = dcgm_diag.read_plan(Settings({"BURNIN_DCGM_LEVEL": "xlong",
                                         "BURNIN_DURATION_SECONDS": "60"}))  # fmt: skip
    assert (plan.level, plan.level_source, plan.timeout_s) == (4, "env", 45)


def test_named_tests_run_instead_of_a_level() -> None:
    plan = dcgm_diag.read_plan(Settings({"BURNIN_DCGM_TESTS": "pcie,memory"}))
    assert (plan.run, plan.level, plan.level_source) == ("pcie,memory", None, "tests")


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"BURNIN_DCGM_LEVEL": "5"}, "BURNIN_DCGM_LEVEL"),
        ({"BURNIN_DCGM_LEVEL": "deep"}, "BURNIN_DCGM_LEVEL"),
        ({"BURNIN_DCGM_LEVEL": "2", "BURNIN_DCGM_TESTS": "pcie"}, "BURNIN_DCGM_TESTS"),
        ({"BURNIN_DCGM_ALLOW": "pcie", "BURNIN_DCGM_PARAMS": "pcie.is_allowed=false"},
         "BURNIN_DCGM_PARAMS"),
        ({"BURNIN_DCGM_PARAMS": "pcie"}, "BURNIN_DCGM_PARAMS"),
        ({"BURNIN_DCGM_TIMEOUT_SECONDS": "0"}, "BURNIN_DCGM_TIMEOUT_SECONDS"),
    ],
)  # fmt: skip
def test_bad_configuration_is_refused_naming_the_variable(
    env: dict[str, str], variable: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        dcgm_diag.read_plan(Settings(env))
    assert refused.value.variable == variable
    assert refused.value.outcome.exit_code == 3


def test_field_samples_fold_to_deltas() -> None:
    def sample(replay: int, temp: int) -> str:
        return (
            f"#Entity TMPTR PCIRP XIDER ESVTL EDVTL URMPS CRMPS\nGPU 0 {temp} {replay} 0 1 0 2 3\n"
        )

    first, last = parse_dmon(sample(5, 40)), parse_dmon(sample(9, 55))
    folded = fold([first, last])
    assert folded.values == {"gpuTempC": 55, "lastXidCode": 0, "pcie_replay_count": 4,
                             "rows_remapped": 0, "eccSbeTotal": 0, "eccDbeTotal": 0}  # fmt: skip
    assert fold([first]).values == {"gpuTempC": 40, "lastXidCode": 0}  # one sample: no deltas
