"""Collecting measurements from baseline runs (glimmer.baseline.collect)."""

from __future__ import annotations

import pytest
from baseline_world import GB200, H100, R, make_run

from glimmer.api.result import TestResult
from glimmer.baseline.collect import ALL_NODES, NO_PRODUCT, collect, product_of, refusal
from glimmer.contract.vocab import Phase
from glimmer.errors import InputError


def test_a_run_that_is_not_a_baseline_is_refused_by_name() -> None:
    run = make_run("certify-1", [R("t", ("n1",), {"smClockMHz": "1"})], baseline=False)
    assert "is not a baseline run" in (refusal(run) or "")
    with pytest.raises(InputError, match="BurnInRun certify-1 is not a baseline run"):
        collect([run])


def test_an_unfinished_run_is_refused() -> None:
    run = make_run("b", [R("t", ("n1",), phase="Running")], phase="Running")
    assert "has not finished (phase Running)" in (refusal(run) or "")


def test_a_baseline_refused_at_start_is_refused_with_its_reason() -> None:
    refused = make_run("b", [], phase="Error")
    assert refused.status is not None
    refused.status.results = [
        TestResult(name="resolve", phase=Phase.ERROR, message="spec.baseline is true: ...")
    ]
    assert "refused at start (spec.baseline is true: ...)" in (refusal(refused) or "")


def test_only_passed_results_are_measurements_and_failing_nodes_are_not_clean() -> None:
    run = make_run(
        "b",
        [
            R("clock", ("n1",), {"smClockMHz": "1900"}),
            R("clock", ("n2",), {"smClockMHz": "1800"}),
            R("clock", ("n3",), {"smClockMHz": "10"}, phase="Failed"),
            R("stress", ("n2",), {"miscompares": "7"}, phase="Failed", kind="gpu-burn"),
            R("stress", ("n1",), {"miscompares": "0"}, kind="gpu-burn"),
        ],
    )
    got = collect([run])
    clock = got.tests[(H100, "clock")].metrics["smClockMHz"]
    assert sorted((s.unit, s.value, s.clean) for s in clock.samples) == [
        ("n1", 1900.0, True),
        ("n2", 1800.0, False),  # n2 failed another test: measured, but not clean
    ]
    assert got.indicted == {"n2", "n3"}


def test_silence_na_and_non_numbers_are_told_apart() -> None:
    run = make_run(
        "b",
        [
            R("t", ("n1",), {"eccErrors": "0", "gpuName": "H100"}),
            R("t", ("n2",), {"gpuName": "H100"}, na=("eccErrors",)),
            R("t", ("n3",), {"eccErrors": "NaN"}),
        ],
    )
    ecc = collect([run]).tests[(H100, "t")].metrics["eccErrors"]
    assert [s.unit for s in ecc.samples] == ["n1"]
    assert (ecc.unmeasurable, ecc.unreadable, ecc.missing) == (["n2"], [("n3", "NaN")], [])
    name = collect([run]).tests[(H100, "t")].metrics["gpuName"]
    assert name.missing == ["n3"]  # n3 said nothing about it


def test_samples_split_by_gpu_product_and_mixed_links_are_left_out() -> None:
    run = make_run(
        "b",
        [
            R("clock", ("a1",), {"smClockMHz": "1900"}),
            R("clock", ("g1",), {"smClockMHz": "1700"}),
            R("link", ("a1", "g1"), {"bandwidthGbps": "399"}, kind="ib-write-bw", scope="Pair"),
            R("link", ("a1", "a2"), {"bandwidthGbps": "398"}, kind="ib-write-bw", scope="Pair"),
        ],
        products={"g1": GB200},
    )
    got = collect([run])
    assert got.groups == [GB200, H100]
    assert set(got.tests) == {(GB200, "clock"), (H100, "clock"), (H100, "link")}
    assert got.tests[(H100, "link")].metrics["bandwidthGbps"].samples[0].unit == "a1/a2"
    assert any("different GPU products" in n for n in got.notes)
    whole = collect([run], by_product=False)
    assert whole.groups == [ALL_NODES] and len(whole.tests[(ALL_NODES, "link")].results) == 2


def test_a_node_without_a_product_label_has_a_group_of_its_own() -> None:
    run = make_run("b", [R("t", ("cpu1",))], products={"cpu1": ""})
    assert product_of(run, "cpu1") == NO_PRODUCT
    assert product_of(run, "unknown-node") == NO_PRODUCT


def test_excluded_nodes_are_left_out_entirely() -> None:
    run = make_run(
        "b",
        [
            R("t", ("n1",), {"smClockMHz": "1900"}),
            R("t", ("n2",), {"smClockMHz": "100"}),
        ],
    )
    got = collect([run], exclude={"n2"})
    assert [s.unit for s in got.tests[(H100, "t")].metrics["smClockMHz"].samples] == ["n1"]
    assert any("excluded on request: n2" in n for n in got.notes)


def test_several_runs_pool_their_samples() -> None:
    a = make_run("b-monday", [R("t", ("n1",), {"smClockMHz": "1900"})])
    b = make_run("b-tuesday", [R("t", ("n1",), {"smClockMHz": "1890"})])
    got = collect([b, a])
    assert got.runs == ["b-monday", "b-tuesday"]
    assert len(got.tests[(H100, "t")].metrics["smClockMHz"].samples) == 2


def test_a_reading_too_large_for_a_float64_is_unreadable_rather_than_raising() -> None:
    # float.fromhex raised OverflowError here (issue 10 item 1); Go reports a range error.
    run = make_run(
        "b",
        [
            R("t", ("n1",), {"eccErrors": "0"}),
            R("t", ("n2",), {"eccErrors": "0x1p1024"}),
        ],
    )
    ecc = collect([run]).tests[(H100, "t")].metrics["eccErrors"]
    assert [s.unit for s in ecc.samples] == ["n1"]
    assert ecc.unreadable == [("n2", "0x1p1024")]
