"""The outbox: what a sink is owed survives a restart, in order, newest body kept."""

from __future__ import annotations

from pathlib import Path

from sink_doubles import an_envelope

from glimmer.sinks.outbox import FILENAME, Outbox


def test_pending_envelopes_survive_a_restart_in_order(tmp_path: Path) -> None:
    box = Outbox(tmp_path)
    a, b, c = an_envelope("a/n"), an_envelope("b/n"), an_envelope("c/n")
    box.put("hook", a)
    box.put("hook", b)
    box.put("file", c)
    box.done("hook", str(a["deliveryId"]))
    box.put("hook", {**b, "phase": "Failed"})  # a newer body keeps its place
    again = Outbox(tmp_path)
    assert [e["deliveryId"] for e in again.owed("hook")] == [b["deliveryId"]]
    assert again.owed("hook")[0]["phase"] == "Failed"
    assert again.sinks() == ["hook", "file"] and len(again) == 2


def test_a_torn_record_is_ignored_and_the_log_is_compacted_on_load(tmp_path: Path) -> None:
    box = Outbox(tmp_path)
    for i in range(5):
        env = an_envelope(f"t/{i}")
        box.put("hook", env)
        box.done("hook", str(env["deliveryId"]))
    box.put("hook", an_envelope("kept/n"))
    with (tmp_path / FILENAME).open("a") as f:
        f.write('{"op": "put", "sink": "ho')
    again = Outbox(tmp_path)
    assert len(again) == 1
    assert len((tmp_path / FILENAME).read_text().splitlines()) == 1


def test_without_a_folder_the_outbox_is_memory_only() -> None:
    box = Outbox()
    box.put("hook", an_envelope())
    assert box.has("hook") and not box.has("file") and box.path is None


def test_a_body_announced_again_unchanged_does_not_grow_the_log(tmp_path: Path) -> None:
    box = Outbox(tmp_path)
    env = an_envelope("Failed")
    box.put("hook", env)
    size = (tmp_path / FILENAME).stat().st_size
    box.put("hook", {**env, "sentAt": "2026-09-01T00:05:00Z"})  # the same verdict, later
    assert (tmp_path / FILENAME).stat().st_size == size
    assert Outbox(tmp_path).owed("hook")[0]["deliveryId"] == env["deliveryId"]
    box.put("hook", {**env, "phase": "Error"})  # says something new: recorded
    assert (tmp_path / FILENAME).stat().st_size > size
    assert Outbox(tmp_path).owed("hook")[0]["phase"] == "Error"
