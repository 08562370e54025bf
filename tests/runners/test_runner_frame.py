"""The frame every runner program shares: typed settings that name a bad variable, the
three-state rule, free text that can never pass for a metric or a marker, crashes and missing
tools as Error, and the marker prefix from the contract."""

from __future__ import annotations

import io

import pytest
from real_runner import assert_contract, finish

from glimmer.contract.exitcode import has_skip_marker
from glimmer.contract.parse import parse
from glimmer.runners.outcome import (
    ConfigError,
    MissingTool,
    Outcome,
    errored,
    failed,
    passed,
    skipped,
)
from glimmer.runners.program import Body, Context, run
from glimmer.runners.report import MarkerWords, Report, prefix_of
from glimmer.runners.settings import Settings
from glimmer.runners.tools import find_tool, run_tool


def _run(body: Body, env: dict[str, str] | None = None, kind: str = "disk-io") -> tuple[str, int]:
    out = io.StringIO()
    code = run(kind, body, env or {}, out)
    return out.getvalue(), code


def test_marker_prefixes_come_from_the_contract() -> None:
    assert prefix_of("memory-stress") == "STRESSAPPTEST"
    assert prefix_of("compute-smoke") == "FP4_GEMM"
    assert prefix_of("disk-io") == "DISK_IO"
    assert prefix_of("host-health") == "HOST_HEALTH"  # the kind that never skips


@pytest.mark.parametrize(
    ("outcome", "line", "code"),
    [
        (passed(), "DISK_IO_PASS", 0),
        (failed("2 I/O errors"), "DISK_IO_FAIL: 2 I/O errors", 1),
        (skipped("no path"), "DISK_IO_SKIP: no path", 2),
        (errored("boom\nsecond line"), "DISK_IO_ERROR: boom second line", 3),
    ],
)  # fmt: skip
def test_the_marker_is_the_last_line_and_agrees_with_the_exit_code(
    outcome: Outcome, line: str, code: int
) -> None:
    stdout, exit_code = _run(lambda ctx: outcome)
    assert stdout.splitlines()[-1] == line
    assert exit_code == code
    assert parse("disk-io", stdout, exit_code).verdict == outcome.verdict


def test_unread_values_are_omitted_and_impossible_ones_declared_na() -> None:
    def body(ctx: Context) -> Outcome:
        ctx.report.metric("ioErrors", 0)
        ctx.report.metric("readBandwidthMBs", None)  # could not be read
        ctx.report.unmeasurable("p99LatencyUs")  # the hardware cannot produce it
        return passed()

    stdout, code = _run(body)
    parsed = parse("disk-io", stdout, code)
    assert parsed.metrics == {"ioErrors": "0"}
    assert parsed.unmeasurable == frozenset({"p99LatencyUs"})


def test_values_print_on_one_line_and_a_read_na_is_not_a_declaration() -> None:
    out = io.StringIO()
    report = Report("DISK_IO", out)
    report.metric("diskIoPath", "/mnt/a\nb")
    report.metric("ioLatencyUs", 12.3456)
    report.metric("nodeReady", True)
    report.metric("configWarnings", "N/A")
    assert out.getvalue().splitlines() == [
        "diskIoPath=/mnt/a b", "ioLatencyUs=12.35", "nodeReady=true",
        "configWarnings=n/a (as read)",
    ]  # fmt: skip


def test_free_text_never_reads_as_a_metric_or_a_marker() -> None:
    def body(ctx: Context) -> Outcome:
        ctx.report.note("tool said x=1")  # has a space before '=': already text
        ctx.report.note("threads=4,size=1")  # would be a metric: guarded
        ctx.report.note("DISK_IO_SKIP: from a tool's output")  # would be a marker: guarded
        return failed("measured")

    stdout, code = _run(body)
    assert code == 1
    parsed = parse("disk-io", stdout, 2)  # even read as if it had exited 2
    assert parsed.metrics == {}
    assert parsed.invalid_names == ()
    assert not has_skip_marker(stdout)
    assert "note: threads=4,size=1" in stdout


def test_a_crash_prints_its_trace_as_text_and_is_an_error_never_a_skip() -> None:
    def body(ctx: Context) -> Outcome:
        ctx.report.metric("ioErrors", 0)
        value = {"a": 1}
        return Outcome(value["missing"])  # type: ignore[arg-type]

    stdout, code = _run(body)
    ran = finish("disk-io", stdout, "", code)
    assert_contract(ran)
    assert code == 3
    assert ran.marker == "DISK_IO_ERROR: runner crashed: KeyError: 'missing'"
    assert ran.parsed.metrics == {"ioErrors": "0"}  # the trace's `value = ...` is no metric
    assert any(line.startswith("trace| ") for line in stdout.splitlines())


def test_a_bad_variable_is_an_error_naming_it() -> None:
    def body(ctx: Context) -> Outcome:
        ctx.settings.integer("DISK_IO_SIZE_MB", 1024, minimum=1)
        return passed()

    stdout, code = _run(body, {"DISK_IO_SIZE_MB": "12s"})
    assert code == 3
    assert stdout.splitlines()[-1] == "DISK_IO_ERROR: DISK_IO_SIZE_MB: '12s' is not a whole number"


def test_settings_read_unset_and_empty_as_the_default() -> None:
    s = Settings({"A": "", "B": " 7 ", "P": "/a::/b", "N": "x, y;z"})
    assert s.integer("A", 3) == 3
    assert s.integer("B", 3) == 7
    assert s.duration(600) == 600
    assert [str(p) for p in s.paths("P", "")] == ["/a", "/b"]
    assert s.names("N") == ("x", "y", "z")
    with pytest.raises(ConfigError):
        Settings({"BURNIN_DURATION_SECONDS": "-5"}).duration(600)


def test_a_missing_tool_is_an_error_naming_the_tool_and_its_package() -> None:
    def body(ctx: Context) -> Outcome:
        find_tool("stressapptest-not-installed", "stressapptest")
        return passed()

    stdout, code = _run(body, kind="memory-stress")
    assert code == 3
    assert stdout.splitlines()[-1] == (
        "STRESSAPPTEST_ERROR: stressapptest-not-installed not found on PATH: "
        "install the Debian package stressapptest"
    )
    with pytest.raises(MissingTool) as missing:
        find_tool("nope-tool", "nope-pkg")
    assert (missing.value.tool, missing.value.package) == ("nope-tool", "nope-pkg")


def test_a_tool_past_its_timeout_is_killed_with_its_children() -> None:
    ran = run_tool(["sh", "-c", "sleep 30 & sleep 30; echo never"], timeout=0.5)
    assert ran.timed_out and ran.exit_code == -1
    assert "never" not in ran.stdout


def test_host_health_speaks_ok_and_fault() -> None:
    out = io.StringIO()
    report = Report("HOST_HEALTH", out, MarkerWords(passed="OK", failed="FAULT"))
    assert report.marker(failed("xid_count=1")) == "HOST_HEALTH_FAULT: xid_count=1"
    assert report.finish(passed()) == 0
    assert report.finish(failed("late")) == 1  # only the first marker is printed
    assert out.getvalue() == "HOST_HEALTH_OK\n"
