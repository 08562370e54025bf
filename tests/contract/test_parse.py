import json
from pathlib import Path

import pytest

from glimmer.contract.emitted import emitted_metrics
from glimmer.contract.parse import parse
from glimmer.contract.vocab import RunnerVerdict


def test_key_value_lines_become_metrics_and_the_last_other_line_the_message() -> None:
    r = parse("custom", "starting\nfooBar=1\n  spaced  =  2 3  \nCUSTOM_PASS\n", 0)
    assert r.metrics == {"fooBar": "1", "spaced": "2 3"}
    assert r.message == "CUSTOM_PASS"
    assert r.verdict is RunnerVerdict.PASS


def test_value_is_split_at_the_first_equals_sign() -> None:
    r = parse("custom", "diagParams=memory.is_allowed=true;pcie.is_allowed=true\n", 0)
    assert r.metrics == {"diagParams": "memory.is_allowed=true;pcie.is_allowed=true"}


def test_empty_value_is_an_ordinary_value() -> None:
    assert parse("custom", "a=\n", 0).metrics == {"a": ""}


@pytest.mark.parametrize("line", ["=5", "  =5", "no equals here", "a b=1", "a\tb=1", "# x=1 y"])
def test_lines_that_are_not_metrics_are_message_candidates(line: str) -> None:
    r = parse("custom", f"{line}\n", 0)
    assert r.metrics == {} and r.invalid_names == ()
    assert r.message == line.strip()


def test_message_is_the_last_non_metric_line_even_before_later_metrics() -> None:
    r = parse("custom", "first\nsecond\nx=1\n\n   \n", 3)
    assert r.message == "second"


def test_there_is_no_comment_syntax() -> None:
    r = parse("custom", "#x=1\n", 0)
    assert r.invalid_names == ("#x",)
    assert r.metrics == {}


def test_invalid_names_are_recorded_once_per_line_and_ignored() -> None:
    r = parse("custom", "Bad=1\nBad=2\ngpu.temp=3\nok=4\n_x=5\n", 0)
    assert r.invalid_names == ("Bad", "Bad", "gpu.temp", "_x")
    assert r.metrics == {"ok": "4"}
    assert not r.reported_nothing()


def test_invalid_name_lines_are_not_message_candidates() -> None:
    assert parse("custom", "hello\nBad=1\n", 0).message == "hello"


@pytest.mark.parametrize("sentinel", ["n/a", "N/A", "N/a", "  n/A  "])
def test_na_in_any_case_declares_the_metric_unmeasurable(sentinel: str) -> None:
    r = parse("host-health", f"rows_remapped={sentinel}\n", 0)
    assert r.unmeasurable == {"remappedRows"}
    assert r.metrics == {}


@pytest.mark.parametrize("value", ["unknown", "none", "", "na", "n/a/", "NaN"])
def test_only_the_exact_word_na_is_the_sentinel(value: str) -> None:
    r = parse("custom", f"a={value}\n", 0)
    assert r.metrics == {"a": value} and r.unmeasurable == frozenset()


def test_last_occurrence_wins_across_measured_and_unmeasurable() -> None:
    r = parse("custom", "a=1\na=n/a\nb=n/a\nb=2\nc=1\nc=3\n", 0)
    assert r.metrics == {"b": "2", "c": "3"}
    assert r.unmeasurable == {"a"}


def test_alias_and_canonical_spelling_are_the_same_metric() -> None:
    r = parse("nccl", "busbw=11\nbusBandwidthGBs=12\n", 0)
    assert r.metrics == {"busBandwidthGBs": "12"}


def test_casing_trap_keys_parse_as_dimensionless_unregistered_names() -> None:
    r = parse("custom", "h2d_bandwidth_gbs=58.9\nsm_clock_mhz=2080\n", 0)
    assert r.metrics == {"h2dBandwidthGbs": "58.9", "smClockMhz": "2080"}


def test_artifact_payload_never_reaches_the_metric_scanner() -> None:
    out = (
        "a=1\n-----BEGIN BURNIN ARTIFACT t.txt text/plain-----\nb=2\nlast words\n"
        "-----END BURNIN ARTIFACT-----\nCUSTOM_PASS\n"
    )
    r = parse("custom", out, 0)
    assert r.metrics == {"a": "1"}
    assert r.message == "CUSTOM_PASS"
    assert r.artifacts[0].payload == b"b=2\nlast words\n"


def test_exit_2_without_marker_is_error_undeclared_skip() -> None:
    r = parse("nccl", "panic: boom\ngoroutine 1 [running]:\n", 2)
    assert r.verdict is RunnerVerdict.ERROR and r.undeclared_skip
    assert r.reported_nothing()
    assert r.message == "goroutine 1 [running]:"


def test_exit_2_with_marker_is_skip_and_the_marker_is_the_message() -> None:
    r = parse("nccl", "NCCL_SKIP: Node scope needs at least 2 GPUs\n", 2)
    assert r.verdict is RunnerVerdict.SKIP and not r.undeclared_skip
    assert r.message == "NCCL_SKIP: Node scope needs at least 2 GPUs"


def test_bytes_are_decoded_with_replacement() -> None:
    r = parse("custom", b"a=\xff\n\xfe oops\n", 0)
    assert r.metrics == {"a": "\ufffd"}
    assert r.message == "\ufffd oops"


def test_crlf_output_parses_like_lf_output() -> None:
    assert parse("custom", "a=1\r\nb=2\r\n", 0).metrics == {"a": "1", "b": "2"}


def test_empty_output_reports_nothing() -> None:
    r = parse("custom", "", 0)
    assert r.reported_nothing() and r.message == "" and r.artifacts == ()


# --- real runner output captured on hardware -------------------------------------------------

GEMM_FIXTURES = ["bf16", "fp4", "fp64", "fp8", "tf32"]


@pytest.mark.parametrize("precision", GEMM_FIXTURES)
def test_gemm_sweep_capture_parses_to_canonical_metrics(shared_dir: Path, precision: str) -> None:
    stdout = (shared_dir / "conformance" / "gemm-sweep" / f"{precision}.stdout").read_bytes()
    r = parse("gemm-sweep", stdout, 0)
    assert r.verdict is RunnerVerdict.PASS
    assert r.message == "GEMM_SWEEP_PASS"
    assert r.invalid_names == () and r.unmeasurable == frozenset()
    assert set(r.metrics) == {
        "builtCudaArch", "gemmPrecision", "sampleWindowS", "gpuName", "computeCap",
        "gemmShape", "iterationsCompleted", "totalKernelMs", "maxAbsRef", "maxAbsError",
        "maxRelativeError", "nonfiniteCount", "achievedTflops",
    }  # fmt: skip
    assert r.metrics["gemmPrecision"] == precision
    assert r.metrics["sampleWindowS"] == "12"  # window_seconds, through the kind alias
    assert r.metrics["gpuName"] == "NVIDIA GB10"
    emitted = emitted_metrics("gemm-sweep")
    assert emitted is not None and set(r.metrics) <= emitted


def test_gemm_sweep_fp4_capture_values(shared_dir: Path) -> None:
    stdout = (shared_dir / "conformance" / "gemm-sweep" / "fp4.stdout").read_text()
    r = parse("gemm-sweep", stdout, 0)
    assert r.metrics["achievedTflops"] == "90.354"
    assert r.metrics["maxRelativeError"] == "0.00195695"
    assert r.metrics["iterationsCompleted"] == "13174"
    assert r.metrics["nonfiniteCount"] == "0"


def test_gemm_sweep_capture_under_another_kind_loses_the_aliases(shared_dir: Path) -> None:
    stdout = (shared_dir / "conformance" / "gemm-sweep" / "bf16.stdout").read_text()
    r = parse("custom", stdout, 0)
    assert "windowSeconds" in r.metrics and "gemmIterations" in r.metrics
    assert "sampleWindowS" not in r.metrics


def _dcgm_fixtures(shared: Path) -> list[Path]:
    return sorted((shared / "conformance" / "dcgm-diag").glob("*.json"))


def test_dcgm_json_leaking_onto_stdout_is_never_read_as_metrics(shared_dir: Path) -> None:
    # dcgmi's JSON contains prose such as "Status = 0. Value = ..."; keys with spaces are not
    # metrics, so a runner that echoes the document cannot fabricate a measurement.
    fixtures = _dcgm_fixtures(shared_dir)
    assert fixtures
    for path in fixtures:
        r = parse("dcgm-diag", path.read_bytes(), 3)
        assert r.metrics == {}, path.name
        assert r.unmeasurable == frozenset(), path.name
        assert r.invalid_names == (), path.name
        assert r.verdict is RunnerVerdict.ERROR


def test_dcgm_json_fenced_as_an_artifact_round_trips(shared_dir: Path) -> None:
    for path in _dcgm_fixtures(shared_dir):
        doc = path.read_bytes()
        if not doc.endswith(b"\n"):
            doc += b"\n"
        out = (
            b"diag_tests_failed=0\n-----BEGIN BURNIN ARTIFACT dcgm-diag.json application/json"
            b"-----\n" + doc + b"-----END BURNIN ARTIFACT-----\nDCGM_DIAG_PASS\n"
        )
        r = parse("dcgm-diag", out, 0)
        (art,) = r.artifacts
        assert not art.dropped, path.name
        assert json.loads(art.payload) == json.loads(doc)
        assert r.metrics == {"diagTestsFailed": "0"}
        assert r.message == "DCGM_DIAG_PASS"
