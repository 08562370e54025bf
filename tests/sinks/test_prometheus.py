"""The Prometheus sink (specs/burnin.md §5.7): metric names and labels, what is dropped, the
128-run cap, forgetting deleted runs, a valid exposition, and feeding from delivered envelopes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from glimmer.sinks.envelope import VERSION
from glimmer.sinks.prometheus import MAX_RUNS, Exporter
from glimmer.sinks.serve import EnvelopeSource, metrics_server


def envelope(uid: str = "u-1", phase: str = "Failed", **extra: Any) -> dict[str, Any]:
    return {
        "version": VERSION,
        "deliveryId": "0" * 32,
        "reason": "RunPhaseChanged",
        "sentAt": "2026-09-01T10:00:00Z",
        "run": {"namespace": "lab", "name": f"run-{uid}", "uid": uid, "profile": "acc"},
        "phase": phase,
        "results": [
            {
                "name": "clock",
                "kind": "clockprobe",
                "scope": "Node",
                "phase": "Failed",
                "nodes": ["gpu-01"],
                "startedAt": "2026-09-01T09:00:00Z",
                "finishedAt": "2026-09-01T09:30:00Z",
                "metrics": {
                    "sustainedClockPct": "41.5",
                    "throttleClassification": "thermal",
                    "myVendorThing": "3",
                    "gpuTempC": "NaN",
                },
            },
            {
                "name": "link",
                "kind": "ib-write-bw",
                "scope": "Pair",
                "phase": "Passed",
                "nodes": ["gpu-01", "gpu-02"],
                "startedAt": "2026-09-01T08:00:00Z",
                "finishedAt": "2026-09-01T08:10:00Z",
                "metrics": {"bandwidthGbps": "390"},
            },
            {"name": "resolve", "kind": "", "phase": "Error", "message": "x"},
        ],
        "summary": {"passed": 1, "failed": 1, "errored": 1, "skipped": 0},
        **extra,
    }


def lines(exporter: Exporter) -> list[str]:
    return [line for line in exporter.exposition().splitlines() if not line.startswith("#")]


def test_run_and_test_series_carry_the_specs_names_and_labels() -> None:
    exporter = Exporter()
    assert exporter.observe(envelope())
    out = lines(exporter)
    base = 'namespace="lab",run="run-u-1"'
    assert f'burnin_run_phase{{{base},profile="acc",phase="Failed"}} 1' in out
    assert f'burnin_run_phase{{{base},profile="acc",phase="Passed"}} 0' in out
    assert sum(line.startswith("burnin_run_phase{") for line in out) == 7
    assert f'burnin_run_tests{{{base},phase="Failed"}} 1' in out
    assert f'burnin_run_tests{{{base},phase="Cancelled"}} 0' in out
    assert f"burnin_run_start_time_seconds{{{base}}} 1788249600" in out
    assert f"burnin_run_finish_time_seconds{{{base}}} 1788255000" in out
    clock = f'{base},test="clock",kind="clockprobe",scope="Node"'
    assert f'burnin_test_phase{{{clock},node="gpu-01",phase="Failed"}} 1' in out
    link = f'{base},test="link",kind="ib-write-bw",scope="Pair"'
    assert f'burnin_test_phase{{{link},node="gpu-01",phase="Passed"}} 1' in out
    assert f'burnin_test_phase{{{link},node="gpu-02",phase="Passed"}} 1' in out
    synthetic = f'{base},test="resolve",kind="",scope="",node="",phase="Error"'
    assert f"burnin_test_phase{{{synthetic}}} 1" in out
    assert (
        f'burnin_test_metric{{{clock},node="gpu-01",metric="sustainedClockPct",unit="Pct",'
        'threshold_use="Acceptance"} 41.5'
    ) in out
    assert (
        f'burnin_test_metric{{{link},node="",metric="bandwidthGbps",unit="Gbps",'
        'threshold_use="Acceptance"} 390'
    ) in out
    assert sum(line.startswith("burnin_test_metric{") for line in out) == 2
    assert exporter.dropped("unregistered") == 1  # myVendorThing
    assert exporter.dropped("non_numeric") == 1  # throttleClassification
    assert exporter.dropped("non_finite") == 1  # gpuTempC=NaN
    assert "burnin_exporter_runs_tracked 1" in out
    assert 'burnin_exporter_metrics_dropped_total{reason="unregistered"} 1' in out


def test_an_unfinished_run_has_no_finish_time_and_an_unknown_phase_its_own_series() -> None:
    exporter = Exporter()
    exporter.observe(envelope(phase="Running"))
    assert not any(line.startswith("burnin_run_finish_time") for line in lines(exporter))
    exporter.observe(envelope(phase="Paused"))
    out = lines(exporter)
    assert 'burnin_run_phase{namespace="lab",run="run-u-1",profile="acc",phase="Paused"} 1' in out
    assert sum(line.startswith("burnin_run_phase{") for line in out) == 8


def test_a_new_envelope_replaces_the_runs_whole_series_set() -> None:
    exporter = Exporter()
    exporter.observe(envelope())
    exporter.observe(envelope(results=[]))
    out = lines(exporter)
    assert not any(line.startswith(("burnin_test_", "burnin_run_start")) for line in out)


def test_unknown_versions_and_uidless_envelopes_are_ignored() -> None:
    exporter = Exporter()
    assert not exporter.observe(envelope(version="burnin.glimmer.ai/v9"))
    assert not exporter.observe({**envelope(), "run": {"name": "x"}})
    assert exporter.tracked == 0


def test_at_most_128_runs_are_held_least_recently_observed_evicted() -> None:
    exporter = Exporter()
    for i in range(MAX_RUNS):
        exporter.observe(envelope(uid=f"u{i}"))
    exporter.observe(envelope(uid="u0"))  # observed again: now the newest
    exporter.observe(envelope(uid="extra-1"))
    exporter.observe(envelope(uid="extra-2"))
    assert exporter.tracked == MAX_RUNS and exporter.evicted == 2
    text = exporter.exposition()
    assert 'run="run-u0"' in text and 'run="run-u1"' not in text and 'run="run-u2"' not in text
    assert "burnin_exporter_runs_evicted_total 2" in text


def test_a_deleted_run_is_forgotten_but_a_finished_one_is_not() -> None:
    exporter = Exporter()
    exporter.observe(envelope(uid="a"))
    exporter.observe(envelope(uid="b", phase="Passed"))
    assert exporter.forget("a") and not exporter.forget("a")
    text = exporter.exposition()
    assert 'run="run-a"' not in text and 'run="run-b"' in text


def test_promtool_accepts_the_exposition(tmp_path: Path) -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        message = "promtool is not on PATH; run tests/tools/ensure_promtool.sh"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    exporter = Exporter()
    exporter.observe(envelope(uid="a"))
    exporter.observe(envelope(uid="b", phase="Running"))
    checked = subprocess.run(
        [promtool, "check", "metrics"],
        input=exporter.exposition().encode(),
        capture_output=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout.decode() + checked.stderr.decode()


def test_a_folder_source_forgets_a_run_whose_entries_are_gone(tmp_path: Path) -> None:
    exporter = Exporter()
    source = EnvelopeSource(tmp_path, exporter)
    for uid, key in (("a", "1" * 32), ("b", "2" * 32)):
        env = {**envelope(uid=uid), "deliveryId": key}
        (tmp_path / f"{key}.json").write_text(json.dumps(env))
    source.refresh()
    assert exporter.tracked == 2
    (tmp_path / f"{'1' * 32}.json").unlink()  # run a deleted (TTL): its entry went with it
    source.refresh()
    text = exporter.exposition()
    assert 'run="run-a"' not in text and 'run="run-b"' in text


def test_a_file_source_reads_on_and_never_rolls_a_run_back(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    exporter = Exporter()
    source = EnvelopeSource(path, exporter)
    newer = envelope(phase="Failed", sentAt="2026-09-01T11:00:00Z")
    older = envelope(phase="Running", sentAt="2026-09-01T10:00:00Z")
    path.write_text(json.dumps(newer) + "\n" + json.dumps(older)[:20])
    source.refresh()
    with path.open("a") as f:
        f.write(json.dumps(older)[20:] + "\n")
    source.refresh()
    assert 'phase="Failed"} 1' in exporter.exposition()
    path.write_text("")  # rotated
    source.refresh()
    assert exporter.tracked == 0


def _completed(uid: str, result: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A TestCompleted envelope: only the result that settled (issue 9 item 5)."""
    return envelope(uid=uid, phase="Running", reason="TestCompleted", results=[result], **extra)


def _node_result(test: str, node: str, phase: str, clock: str) -> dict[str, Any]:
    return {
        "name": test,
        "kind": "clockprobe",
        "scope": "Node",
        "phase": phase,
        "nodes": [node],
        "startedAt": "2026-09-01T09:00:00Z",
        "metrics": {"sustainedClockPct": clock},
    }


def test_test_completed_envelopes_accumulate_into_the_runs_series() -> None:
    exporter = Exporter()
    exporter.observe(envelope(phase="Running", results=[]))
    exporter.observe(_completed("u-1", _node_result("clock", "gpu-01", "Passed", "91")))
    exporter.observe(_completed("u-1", _node_result("clock", "gpu-02", "Failed", "41")))
    out = lines(exporter)
    for node, phase in (("gpu-01", "Passed"), ("gpu-02", "Failed")):
        assert any(f'node="{node}",phase="{phase}"' in line for line in out), node
    assert 'burnin_run_tests{namespace="lab",run="run-u-1",phase="Failed"} 1' in out
    assert 'burnin_run_tests{namespace="lab",run="run-u-1",phase="Passed"} 1' in out
    assert sum(line.startswith("burnin_test_metric{") for line in out) == 2


def test_the_terminal_envelope_replaces_what_the_test_completed_ones_built() -> None:
    exporter = Exporter()
    exporter.observe(_completed("u-1", _node_result("old", "gpu-09", "Passed", "90")))
    exporter.observe(envelope(phase="Failed"))
    out = lines(exporter)
    assert not any('test="old"' in line for line in out)
    assert any('test="clock"' in line for line in out)


def test_an_in_flight_result_read_late_never_reopens_a_settled_one() -> None:
    exporter = Exporter()
    exporter.observe(_completed("u-1", _node_result("clock", "gpu-01", "Failed", "41")))
    stale = envelope(phase="Running", reason="Checkpoint", checkpointSequence=1)
    stale["results"] = [_node_result("clock", "gpu-01", "Running", "80")]
    exporter.observe(stale)
    out = lines(exporter)
    assert any('node="gpu-01",phase="Failed"' in line for line in out)
    assert not any('node="gpu-01",phase="Running"' in line for line in out)


def test_a_folder_source_shows_every_unit_of_envelopes_sent_at_one_instant(
    tmp_path: Path,
) -> None:
    # Virtual time: the Running envelope and the TestCompleted ones can share a second, and the
    # folder lists them by deliveryId, not by when they were sent.
    running = {**envelope(phase="Running", results=[]), "deliveryId": "f" * 32}
    (tmp_path / f"{'f' * 32}.json").write_text(json.dumps(running))
    for i, key in enumerate(("1" * 32, "2" * 32)):
        env = {
            **_completed("u-1", _node_result("clock", f"gpu-0{i}", "Passed", "90")),
            "deliveryId": key,
        }
        (tmp_path / f"{key}.json").write_text(json.dumps(env))
    exporter = Exporter()
    EnvelopeSource(tmp_path, exporter).refresh()
    out = lines(exporter)
    assert 'burnin_run_tests{namespace="lab",run="run-u-1",phase="Passed"} 2' in out


class _Unreadable(EnvelopeSource):
    def refresh(self) -> None:
        raise PermissionError(13, "Permission denied")


def test_a_source_that_cannot_be_read_still_serves_what_was_read_before(tmp_path: Path) -> None:
    exporter = Exporter()
    exporter.observe(envelope(uid="a"))
    server = metrics_server(exporter, _Unreadable(tmp_path, exporter), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.status == 200 and 'run="run-a"' in resp.read().decode()
    finally:
        server.shutdown()
        server.server_close()
