"""The JSONL file sink and the ConfigMap-like folder sink (specs/burnin.md §5.6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sink_doubles import an_envelope

from glimmer.sinks.base import encode
from glimmer.sinks.directory import DirectorySink, read_directory
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.jsonl import JsonlSink, latest_by_id, read_jsonl


def put(sink: JsonlSink | DirectorySink, key: str = "a/n", **extra: object) -> str:
    env = {**an_envelope(key), **extra}
    sink.send(env, encode(env), 1.0)
    return str(env["deliveryId"])


def test_the_file_sink_appends_one_envelope_per_line(tmp_path: Path) -> None:
    sink = JsonlSink(tmp_path / "deep" / "out.jsonl")
    first = put(sink, "a/n1")
    put(sink, "a/n2")
    put(sink, "a/n1", sentAt="2026-09-01T00:05:00Z")  # a re-send: appended again
    lines = (tmp_path / "deep" / "out.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["version"] for line in lines)
    latest = latest_by_id(read_jsonl(sink.path))
    assert len(latest) == 2 and latest[first]["sentAt"] == "2026-09-01T00:05:00Z"


def test_a_torn_last_line_is_skipped_by_readers(tmp_path: Path) -> None:
    sink = JsonlSink(tmp_path / "out.jsonl")
    put(sink)
    with sink.path.open("a") as f:
        f.write('{"version": "burnin.glim')
    assert len(list(read_jsonl(sink.path))) == 1


def test_an_unwritable_file_is_a_retryable_failure(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("a file where a folder should be")
    with pytest.raises(DeliveryError) as err:
        put(JsonlSink(tmp_path / "blocker" / "out.jsonl"))
    assert not err.value.permanent


def test_the_folder_sink_keeps_one_entry_per_delivery_id(tmp_path: Path) -> None:
    sink = DirectorySink(tmp_path / "cm")
    first = put(sink, "a/n1")
    put(sink, "a/n2")
    entry = tmp_path / "cm" / f"{first}.json"
    stamp = entry.stat().st_mtime_ns
    put(sink, "a/n1")  # identical: left alone
    assert entry.stat().st_mtime_ns == stamp
    put(sink, "a/n1", phase="Failed")  # different: replaced
    assert json.loads(entry.read_text())["phase"] == "Failed"
    assert len(list(read_directory(tmp_path / "cm"))) == 2
    assert not list((tmp_path / "cm").glob("*.tmp"))


def test_the_folder_sink_refuses_past_its_budget_permanently(tmp_path: Path) -> None:
    body = len(encode(an_envelope("a/n1")))
    sink = DirectorySink(tmp_path / "cm", budget=2 * (body + 32) + 10)
    put(sink, "a/n1")
    put(sink, "a/n2")
    with pytest.raises(DeliveryError) as err:
        put(sink, "a/n3")
    assert err.value.permanent and "rotate or shard" in str(err.value)
