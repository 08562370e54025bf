"""BurnInRuns as files (backends/common/run_store.py): atomic writes (temp + rename), a lock
per run, stale writes refused, and deletion that waits for the finalizers."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from engine_world import (
    GATE_MISCOMPARES,
    ScriptedRunner,
    nodes,
    profile,
    reply,
    run_object,
    spec_of,
)

from glimmer.api.run import BurnInRunStatus
from glimmer.backends.common import run_store
from glimmer.backends.common.run_store import FileRunStore
from glimmer.backends.sim.backend import SimBackend
from glimmer.backends.sim.driver import drive
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import Conflict, NotFound
from glimmer.engine.reconciler import Engine

WRITES = 40


def _stored(tmp_path: Path) -> tuple[FileRunStore, Any]:
    store = FileRunStore(tmp_path)
    run = run_object(targets=["node-000"])
    run = run.model_copy(update={"metadata": run.metadata.model_copy(update={"uid": "u-1"})})
    return store, store.create_run(run)


def test_a_run_written_is_read_back_whole_from_its_own_file(tmp_path: Path) -> None:
    store, run = _stored(tmp_path)
    assert (tmp_path / "default" / "run.json").is_file()
    assert store.get_run("default", "run") == run
    assert store.list_runs() == [run]
    assert run.metadata.resource_version == "1" and run.metadata.generation == 1
    with pytest.raises(Conflict):
        store.create_run(run)


def test_a_write_from_a_stale_read_is_refused_and_a_fresh_one_bumps_the_version(
    tmp_path: Path,
) -> None:
    store, run = _stored(tmp_path)
    written = store.write_status(run, BurnInRunStatus(phase=Phase.RUNNING))
    assert written.metadata.resource_version == "2"
    with pytest.raises(Conflict):
        store.write_status(run, BurnInRunStatus(phase=Phase.FAILED))  # read before the write
    again = store.write_metadata(written, annotations={"a": "1"})
    assert again.status is not None and again.status.phase is Phase.RUNNING
    assert store.get_run("default", "run") == again
    gone = run.model_copy(update={"metadata": run.metadata.model_copy(update={"uid": "other"})})
    with pytest.raises(NotFound):
        store.write_status(gone, BurnInRunStatus())


def test_a_crash_mid_write_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, run = _stored(tmp_path)

    def crash(fd: int) -> None:
        raise OSError("power cut")  # the new content is in the temporary file, not yet renamed

    monkeypatch.setattr(run_store.os, "fsync", crash)
    with pytest.raises(OSError, match="power cut"):
        store.write_status(run, BurnInRunStatus(phase=Phase.RUNNING))
    monkeypatch.undo()
    assert store.get_run("default", "run") == run
    assert sorted(p.name for p in (tmp_path / "default").iterdir()) == ["run.json", "run.lock"]
    (tmp_path / "default" / ".run.json.abandoned.tmp").write_text("{half")
    assert store.list_runs() == [run]  # a temporary file left by a killed writer is not a run


def _bump(root: str, count: int) -> None:
    store = FileRunStore(Path(root))
    done = 0
    while done < count:
        run = store.get_run("default", "run")
        assert run is not None
        n = int((run.metadata.annotations or {}).get("count", "0"))
        try:
            store.write_metadata(run, annotations={"count": str(n + 1)})
        except Conflict:
            continue  # another process wrote in between: read again
        done += 1


def test_two_processes_writing_one_run_lose_no_update(tmp_path: Path) -> None:
    store, _ = _stored(tmp_path)
    ctx = multiprocessing.get_context("fork")
    writers = [ctx.Process(target=_bump, args=(str(tmp_path), WRITES)) for _ in range(2)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(timeout=120)
    assert [w.exitcode for w in writers] == [0, 0]
    final = store.get_run("default", "run")
    assert final is not None and (final.metadata.annotations or {})["count"] == str(2 * WRITES)
    assert final.metadata.resource_version == str(1 + 2 * WRITES)


def test_a_run_with_finalizers_is_deleted_once_the_last_one_is_removed(tmp_path: Path) -> None:
    store, run = _stored(tmp_path)
    held = store.write_metadata(run, finalizers=["burnin.glimmer.ai/cleanup"])
    store.delete_run("default", "run")
    marked = store.get_run("default", "run")
    assert marked is not None and marked.metadata.deletion_timestamp is not None
    assert held.metadata.deletion_timestamp is None
    store.write_metadata(marked, finalizers=[])
    assert store.get_run("default", "run") is None and store.list_runs() == []
    store.delete_run("default", "run")  # deleting what is gone is not an error


def _gated_world(store: FileRunStore | None) -> Any:
    runner = ScriptedRunner(default="miscompares=0\nok").on(reply("miscompares=2"), node="node-001")
    backend = SimBackend(
        nodes(2),
        runner=runner,
        seed=7,
        profiles={"prof": profile([{"testRef": "a"}])},
        tests={"a": spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])},
        store=store,
    )
    backend.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    return backend, drive(backend, Engine(backend), "default", "run").run


def test_the_simulator_can_keep_its_runs_as_files_and_reaches_the_same_verdict(
    tmp_path: Path,
) -> None:
    _, in_memory = _gated_world(None)
    backend, on_disk = _gated_world(FileRunStore(tmp_path))
    assert on_disk.status == in_memory.status and on_disk.status.phase is Phase.FAILED
    assert FileRunStore(tmp_path).get_run("default", "run") == on_disk  # another reader sees it
    assert backend.runs == {}  # nothing kept in memory
    backend.delete_run("default", "run")
    assert backend.get_run("default", "run") is None
    assert list(backend.executions("default", "run", on_disk.metadata.uid)) == []


def test_a_store_does_not_parse_again_the_version_it_wrote_or_read_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, run = _stored(tmp_path)
    parsed: list[str] = []
    original = run_store.BurnInRun.model_validate_json

    def counting(text: str) -> Any:
        parsed.append(text)
        return original(text)

    monkeypatch.setattr(run_store.BurnInRun, "model_validate_json", counting)
    written = store.write_status(run, BurnInRunStatus(phase=Phase.RUNNING))
    for _ in range(3):
        assert store.get_run("default", "run") == written
    assert parsed == []  # its own write, read back three times, never re-parsed
    fresh = FileRunStore(tmp_path)
    assert fresh.get_run("default", "run") == written and fresh.get_run("default", "run")
    assert len(parsed) == 1  # another store parses it once, then holds that version


def test_a_store_sees_the_write_another_store_made_after_its_own_read(tmp_path: Path) -> None:
    mine, run = _stored(tmp_path)
    theirs = FileRunStore(tmp_path)
    seen = theirs.get_run("default", "run")
    assert seen is not None
    theirs.write_status(seen, BurnInRunStatus(phase=Phase.FAILED))
    now = mine.get_run("default", "run")
    assert now is not None and now.status is not None and now.status.phase is Phase.FAILED
    with pytest.raises(Conflict):  # and its stale copy is refused, not written over theirs
        mine.write_status(run, BurnInRunStatus(phase=Phase.PASSED))
    theirs.delete_run("default", "run")
    assert mine.get_run("default", "run") is None


def test_a_replaced_run_is_stored_whole_over_the_one_of_its_name(tmp_path: Path) -> None:
    store, run = _stored(tmp_path)
    store.write_status(run, BurnInRunStatus(phase=Phase.RUNNING))
    edited = run.model_copy(update={"spec": run.spec.model_copy(update={"suspend": True})})
    replaced = store.put_run(edited)  # a user's edit: made from an old copy, still stored
    assert replaced.spec.suspend and replaced.metadata.resource_version == "3"
    assert store.get_run("default", "run") == replaced


def test_a_file_changed_behind_the_store_keeping_inode_size_and_mtime_is_read_again(
    tmp_path: Path,
) -> None:
    # Two writes within one coarse clock tick can leave a file with the inode, size and mtime
    # of a version a store has cached; only the bytes tell them apart (a lost update in CI).
    store, _ = _stored(tmp_path)
    path = tmp_path / "default" / "run.json"
    before = path.stat()
    text = path.read_text()
    assert '"uid":"u-1"' in text
    path.write_text(text.replace('"uid":"u-1"', '"uid":"u-2"'))  # in place: the same inode
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    seen = store.get_run("default", "run")
    assert seen is not None and seen.metadata.uid == "u-2"
