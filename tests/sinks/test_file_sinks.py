"""The JSONL file sink and the ConfigMap-like folder sink (specs/burnin.md §5.6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sink_doubles import an_envelope

from glimmer.sinks.base import encode
from glimmer.sinks.directory import DirectorySink, read_directory, shards
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


def _objects_within(root: Path, budget: int) -> list[int]:
    """What each object of a folder sink holds (keys and values), checked against ``budget``."""
    sizes = [
        sum(len(p.name) + p.stat().st_size for p in shard.iterdir() if p.is_file())
        for shard in shards(root)
    ]
    assert all(size <= budget for size in sizes), sizes
    return sizes


def test_the_folder_sink_moves_on_to_a_new_shard_when_an_object_is_full(tmp_path: Path) -> None:
    body = len(encode(an_envelope("a/n1")))
    budget = 2 * (body + 37) + 10
    sink = DirectorySink(tmp_path / "cm", budget=budget)
    ids = [put(sink, f"a/n{i}") for i in range(5)]
    assert [s.name for s in shards(tmp_path / "cm")] == ["cm", "shard-0001", "shard-0002"]
    assert len(_objects_within(tmp_path / "cm", budget)) == 3
    assert {e["deliveryId"] for _, e in read_directory(tmp_path / "cm")} == set(ids)


def test_an_envelope_bigger_than_an_object_is_stored_in_parts_and_reads_back_whole(
    tmp_path: Path,
) -> None:
    results = [{"name": "burn", "kind": "gpu-burn", "phase": "Passed", "nodes": [f"n{i}"]}
               for i in range(200)]  # fmt: skip
    big = {**an_envelope("Failed"), "results": results}
    budget = 4_000
    sink = DirectorySink(tmp_path / "cm", budget=budget)
    sink.send(big, encode(big), 1.0)
    parts = sorted(p.name for p in (tmp_path / "cm").rglob("*.part"))
    assert len(parts) > 2 and parts[0].endswith(f".0001-of-{len(parts):04d}.part")
    _objects_within(tmp_path / "cm", budget)
    [(_, back)] = read_directory(tmp_path / "cm")
    assert back == big
    # A re-send that fits one object replaces the parts rather than leaving them behind.
    small = {**big, "results": results[:2]}
    sink.send(small, encode(small), 1.0)
    assert not list((tmp_path / "cm").rglob("*.part"))
    assert [e for _, e in read_directory(tmp_path / "cm")] == [small]


def test_a_reader_skips_an_envelope_whose_parts_are_not_all_there(tmp_path: Path) -> None:
    results = [{"name": "burn", "kind": "gpu-burn", "phase": "Passed", "nodes": [f"n{i}"]}
               for i in range(100)]  # fmt: skip
    big = {**an_envelope("Failed"), "results": results}
    DirectorySink(tmp_path / "cm", budget=3_000).send(big, encode(big), 1.0)
    next((tmp_path / "cm").rglob("*.0002-of-*.part")).unlink()
    assert list(read_directory(tmp_path / "cm")) == []


def test_a_second_sink_on_the_same_folder_keeps_each_object_under_the_budget(
    tmp_path: Path,
) -> None:
    body = len(encode(an_envelope("a/n1")))
    budget = 2 * (body + 37) + 10
    first = put(DirectorySink(tmp_path / "cm", budget=budget), "a/n0")
    again = DirectorySink(tmp_path / "cm", budget=budget)  # a later process
    entry = tmp_path / "cm" / f"{first}.json"
    stamp = entry.stat().st_mtime_ns
    put(again, "a/n0")  # identical: left alone
    assert entry.stat().st_mtime_ns == stamp
    for i in range(1, 4):
        put(again, f"a/n{i}")
    assert len(_objects_within(tmp_path / "cm", budget)) == 2
    assert len(list(read_directory(tmp_path / "cm"))) == 4
