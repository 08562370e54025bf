"""Pair (the link) and Group (the collective) combination, burnin.md §2.8–§2.9."""

from __future__ import annotations

from glimmer.contract.parse import parse
from glimmer.contract.vocab import ParsedResult, Phase, RunnerVerdict, Threshold
from glimmer.verdict.group import combine_group, elect_metrics
from glimmer.verdict.pair import combine_pair
from glimmer.verdict.settle import attempt_outcome

ERR, FAIL, SKIP, PASS = (
    RunnerVerdict.ERROR,
    RunnerVerdict.FAIL,
    RunnerVerdict.SKIP,
    RunnerVerdict.PASS,
)


def run(stdout: str, code: int, kind: str = "ib-write-bw") -> ParsedResult:
    return parse(kind, stdout, code)


# --- Pair -----------------------------------------------------------------------------------


def test_pair_error_outranks_fail_and_client_is_checked_first() -> None:
    combined = combine_pair("n1", "n2", run("srv broke\n", 3), run("IB_WRITE_BW_FAIL: x\n", 1))
    assert (combined.verdict, combined.exit_code) == (ERR, 3)
    both_fail = combine_pair("n1", "n2", run("", 1), run("", 1))
    assert both_fail.verdict is FAIL


def test_pair_healthy_server_and_failing_client_fail_the_link() -> None:
    combined = combine_pair("n1", "n2", run("ready\n", 0), run("no traffic\n", 1))
    assert (combined.verdict, combined.exit_code) == (FAIL, 1)


def test_pair_skip_beats_pass() -> None:
    combined = combine_pair("n1", "n2", run("IB_WRITE_BW_SKIP: none\n", 2), run("", 0))
    assert combined.verdict is SKIP


def test_pair_special_cases_when_an_end_never_reported() -> None:
    assert combine_pair("a", "b", None, None).verdict is ERR
    assert combine_pair("a", "b", None, None).exit_code == -1
    # A server that exits clean before any client ran measured no link.
    assert combine_pair("a", "b", run("", 0), None).verdict is ERR
    assert combine_pair("a", "b", run("IB_WRITE_BW_SKIP: no rdma\n", 2), None).verdict is SKIP
    assert combine_pair("a", "b", run("", 1), None).verdict is FAIL
    assert combine_pair("a", "b", None, run("", 0)).verdict is PASS


def test_pair_metrics_merge_server_first_and_na_only_where_nobody_measured() -> None:
    server = run("bw_average=90\nlatencyUs=n/a\nsrvOnly=1\np99LatencyUs=n/a\n", 0)
    client = run("bw_average=99.6\nlatencyUs=1.7\n#bad=1\n", 0)
    combined = combine_pair("n1", "n2", server, client)
    assert combined.metrics == {"bandwidthGbps": "99.6", "latencyUs": "1.7", "srvOnly": "1"}
    assert combined.unmeasurable == frozenset({"p99LatencyUs"})
    assert combined.invalid_names == ("#bad",)


def test_pair_message_format() -> None:
    combined = combine_pair("n1", "n2", run("server up\n", 0), run("bw ok\n", 0))
    assert combined.message == (
        "pair n1 <-> n2 (this verdict is about the LINK, not about either endpoint): "
        "server n1 pass (exit 0): server up; client n2 pass (exit 0): bw ok"
    )
    absent = combine_pair("n1", "n2", None, run("", 3))
    assert absent.message.endswith("server n1 did not report; client n2 error (exit 3)")


def test_pair_message_spells_out_an_undeclared_skip() -> None:
    combined = combine_pair("n1", "n2", run("", 0), run("panic: nil map\n", 2))
    assert combined.verdict is ERR
    assert combined.message.endswith(
        "client n2 exited 2 without declaring a skip — likely a crashed runner, hardware "
        "unjudged [runner said: panic: nil map]"
    )
    # The combined result is not itself an undeclared skip: its message already explains.
    outcome = attempt_outcome(combined, (), segmented=False)
    assert outcome.message == combined.message


def test_pair_gates_are_evaluated_once_on_the_merged_metrics() -> None:
    combined = combine_pair("n1", "n2", run("bw_average=10\n", 0), run("bw_average=95\n", 0))
    gates = [Threshold("bandwidthGbps", "GreaterThanOrEqual", "89")]
    assert attempt_outcome(combined, gates, segmented=False).phase is Phase.PASSED


# --- Group ----------------------------------------------------------------------------------


def nccl(stdout: str, code: int) -> ParsedResult:
    return parse("nccl", stdout, code)


NODES = ["g0", "g1", "g2"]


def test_group_with_no_rank_reporting_is_an_error() -> None:
    combined = combine_group(NODES, [None, None, None])
    assert (combined.verdict, combined.exit_code) == (ERR, -1)


def test_group_error_outranks_fail_from_the_lowest_rank_even_with_ranks_missing() -> None:
    combined = combine_group(NODES, [nccl("", 1), None, nccl("boom\n", 3)])
    assert (combined.verdict, combined.exit_code) == (ERR, 3)
    failed = combine_group(NODES, [nccl("", 0), nccl("", 1), None])
    assert failed.verdict is FAIL


def test_group_missing_rank_is_an_error_before_skip_or_pass() -> None:
    skipped_root = combine_group(NODES, [nccl("NCCL_SKIP: none\n", 2), None, None])
    assert skipped_root.verdict is ERR
    passed = combine_group(NODES, [nccl("busbw=12\n", 0), nccl("", 0), None])
    assert passed.verdict is ERR
    assert "rank 2 (g2) did not report" in passed.message


def test_group_full_turnout_skips_if_any_rank_skipped_else_passes() -> None:
    ranks = [nccl("", 0), nccl("NCCL_SKIP: x\n", 2), nccl("", 0)]
    assert combine_group(NODES, ranks).verdict is SKIP
    assert combine_group(NODES, [nccl("", 0)] * 3).verdict is PASS


def test_group_elects_each_metric_by_its_combination() -> None:
    ranks = [
        nccl("busbw=12.0\ngpuTempC=70\neccMode=Enabled\nlabel=a\nmiscompares=1\n", 0),
        nccl("busbw=9.0\ngpuTempC=81\neccMode=Enabled\nlabel=b\nmiscompares=2\n", 0),
        nccl("gpuTempC=75\neccMode=Enabled\n", 0),
    ]
    election = elect_metrics(ranks, NODES)
    assert election.metrics["busBandwidthGBs"] == "12.0"  # Collective: rank 0
    assert election.metrics["gpuTempC"] == "81"  # Max: the hottest
    assert election.metrics["miscompares"] == "3"  # Sum
    assert election.metrics["eccMode"] == "Enabled"  # unclassified, all agree
    assert "label" not in election.metrics  # unclassified, ranks disagree
    assert "label" in election.unmeasurable


def test_group_one_ranks_na_makes_the_key_unmeasurable() -> None:
    ranks = [nccl("eccErrors=0\n", 0), nccl("eccErrors=n/a\n", 0), nccl("eccErrors=0\n", 0)]
    combined = combine_group(NODES, ranks)
    assert "eccErrors" not in combined.metrics
    assert "eccErrors" in combined.unmeasurable
    gate = Threshold("eccErrors", "Equal", "0")
    assert attempt_outcome(combined, [gate], segmented=False).phase is Phase.FAILED


def test_group_non_numeric_reading_drops_a_folded_key() -> None:
    ranks = [nccl("gpuTempC=70\n", 0), nccl("gpuTempC=hot\n", 0), nccl("", 0)]
    election = elect_metrics(ranks, NODES)
    assert "gpuTempC" in election.unmeasurable


def test_group_disagreements_are_noted_in_the_message() -> None:
    ranks = [nccl("gpuTempC=70\nlabel=a\n", 0), nccl("gpuTempC=81\nlabel=b\n", 0), nccl("", 0)]
    combined = combine_group(NODES, ranks)
    assert combined.message.endswith(
        "[ranks disagreed: gpuTempC kept 81 (rank 0 (g0)=70); "
        "label dropped (rank 0 (g0)=a, rank 1 (g1)=b)]"
    )


def test_group_message_groups_ranks_by_verdict() -> None:
    combined = combine_group(NODES, [nccl("root ok\n", 0), nccl("", 3), nccl("", 0)])
    assert combined.message == (
        "group of 3 (this verdict is about the COLLECTIVE, not about any one rank): "
        "rank 1 (g1) error (exit 3); rank 0 (g0) pass (exit 0): root ok; rank 2 (g2) pass (exit 0)"
    )


def test_group_message_summarises_many_ranks() -> None:
    nodes = [f"n{i}" for i in range(8)]
    same = combine_group(nodes, [nccl("ok\n", 0)] * 8)
    assert same.message.endswith("all 8 ranks pass, e.g. rank 0 (n0) pass (exit 0): ok")
    mixed = combine_group(nodes, [nccl("", 0)] * 6 + [nccl("", 3), None])
    assert "6 ranks pass (first 4: rank 0 (n0) pass (exit 0); " in mixed.message
    assert "; and 2 more)" in mixed.message
    assert "rank 7 (n7) did not report" in mixed.message


def test_group_message_caps_rank_lines_and_the_whole_message() -> None:
    nodes = [f"n{i}" for i in range(40)]
    long_words = "x" * 1000
    combined = combine_group(nodes, [nccl(f"{long_words}{i}\n", 3 + i) for i in range(40)])
    assert len(combined.message.encode()) <= 4096
    rank_line = combined.message.split("e.g. ", 1)[1]
    assert rank_line.startswith("rank 0 (n0) error (exit 3): xxx")
    assert rank_line.endswith("… (truncated)")
    assert len(rank_line.encode()) == 300
