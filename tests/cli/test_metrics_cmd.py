import json

import pytest

from glimmer.cli.app import main


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    assert main(["metrics", *argv, "--output", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_metrics_lists_the_whole_registry_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    rows = _json(capsys)
    assert isinstance(rows, list) and len(rows) == 141
    first = rows[0]
    assert first == {
        "name": "bandwidthGbps",
        "registered": True,
        "unit": "Gbps",
        "use": "Acceptance",
        "windowFold": "Min",
        "rankFold": "Min",
        "description": "mean RDMA-write link throughput (ib-write-bw, gpudirect-rdma)",
        "emittedBy": ["ib-write-bw", "gpudirect-rdma"],
        "aliases": [
            {"kind": "ib-write-bw", "rawKey": "bw_average"},
            {"kind": "gpudirect-rdma", "rawKey": "bw_average"},
        ],
    }
    ranks = next(r for r in rows if r["name"] == "ranks")
    assert ranks["unit"] == "none" and ranks["rankFold"] == "unclassified"


def test_metrics_table_shows_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    for name in ("bandwidthGbps", "hostToDeviceBandwidthSpreadPct", "hostHealthPanic"):
        assert name in out
    assert "141 metrics" in out


def test_registered_name_shows_its_row_kinds_and_aliases(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metrics", "xidEvents"]) == 0
    out = capsys.readouterr().out
    assert "Acceptance" in out and "Sum" in out
    assert "thermal-soak" in out and "host-health" in out
    assert "xid_count (gpu-burn)" in out


def test_registered_name_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    row = _json(capsys, "busBandwidthGBs")
    assert isinstance(row, dict)
    assert row["rankFold"] == "Collective" and row["emittedBy"] == ["nccl"]
    assert row["aliases"] == [{"kind": "nccl", "rawKey": "busbw"}]


def test_unregistered_well_formed_name_is_legal_with_unit_from_suffix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metrics", "myQueueLatencyUs"]) == 0
    out = capsys.readouterr().out
    assert "registered" in out and "no (legal" in out
    assert "Us (read from the name's suffix)" in out
    assert "accepted" in out


def test_unregistered_emitted_name_names_its_kind(capsys: pytest.CaptureFixture[str]) -> None:
    row = _json(capsys, "maxRelError")
    assert isinstance(row, dict)
    assert row["registered"] is False and row["emittedBy"] == ["compute-smoke"]
    assert row["windowFold"] == "Last" and row["unit"] == "none"


@pytest.mark.parametrize("name", ["Foo", "max_rel_error", "gpu.temp", "9lives"])
def test_name_the_grammar_rejects_exits_2_with_a_clear_message(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    assert main(["metrics", name]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "error:" in captured.err and "lowerCamelCase" in captured.err
    assert "Traceback" not in captured.err


def test_rejected_raw_key_says_what_runners_report_for_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["metrics", "bw_average", "-o", "json"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "bandwidthGbps from ib-write-bw, gpudirect-rdma" in err
    assert "bwAverage from any other kind" in err


def test_metrics_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "--help"]) == 0
    assert "--output" in capsys.readouterr().out
