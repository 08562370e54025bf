"""The run store (engine/backend.py, ``RunStore``): every write returns the stored run with a
new resourceVersion, metadata writes keep the stored status, reads are fresh, a stale write is
refused where the store can tell, and a run handed out never changes. Run on every substrate's
store and on the file store alone."""

from __future__ import annotations

from typing import Any

import pytest
from substrates import NAMESPACE, StoreSubstrate, Substrate, execution_spec, run_object

from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import Backend, Conflict, RunStore

FINALIZER = "burnin.glimmer.ai/cleanup"


def _created(store_substrate: StoreSubstrate, store: RunStore, name: str = "run") -> BurnInRun:
    run = store_substrate.create(store, run_object(name, ("node-000",)))
    assert run.metadata.resource_version
    return run


def _rv(run: BurnInRun) -> str:
    assert run.metadata.resource_version is not None
    return run.metadata.resource_version


def _dump(run: BurnInRun) -> dict[str, Any]:
    return run.model_dump(mode="json")


def test_write_status_returns_the_stored_run_and_bumps_its_resource_version(
    store_substrate: StoreSubstrate, store: RunStore
) -> None:
    run = _created(store_substrate, store)
    written = store.write_status(run, BurnInRunStatus(phase=Phase.RUNNING, passed=1))
    assert written.status is not None and written.status.phase is Phase.RUNNING
    assert _rv(written) != _rv(run)
    stored = store.get_run(NAMESPACE, "run")
    assert stored is not None and _dump(stored) == _dump(written)
    again = store.write_status(written, BurnInRunStatus(phase=Phase.RUNNING, passed=2))
    assert _rv(again) not in (_rv(run), _rv(written))


def test_write_metadata_sets_annotations_and_finalizers_and_keeps_the_stored_status(
    store_substrate: StoreSubstrate, store: RunStore
) -> None:
    run = _created(store_substrate, store)
    run = store.write_status(run, BurnInRunStatus(phase=Phase.RUNNING, passed=3))
    written = store.write_metadata(run, annotations={"a": "1", "b": "2"}, finalizers=[FINALIZER])
    assert written.metadata.annotations == {"a": "1", "b": "2"}
    assert written.metadata.finalizers == [FINALIZER]
    assert written.status is not None and written.status.passed == 3
    assert _rv(written) != _rv(run)
    deleted_key = store.write_metadata(written, annotations={"a": None})
    assert deleted_key.metadata.annotations == {"b": "2"}
    assert deleted_key.metadata.finalizers == [FINALIZER]  # None: finalizers as stored
    stored = store.get_run(NAMESPACE, "run")
    assert stored is not None and _dump(stored) == _dump(deleted_key)


def test_list_runs_and_get_run_see_every_write_at_once(
    store_substrate: StoreSubstrate, store: RunStore
) -> None:
    assert store.list_runs() == []
    first = _created(store_substrate, store, "first")
    assert [r.name for r in store.list_runs()] == ["first"]
    _created(store_substrate, store, "second")
    assert sorted(r.name for r in store.list_runs()) == ["first", "second"]
    store.write_status(first, BurnInRunStatus(phase=Phase.PASSED))
    (listed,) = [r for r in store.list_runs() if r.name == "first"]
    assert listed.status is not None and listed.status.phase is Phase.PASSED
    got = store.get_run(NAMESPACE, "first")
    assert got is not None and got.status is not None and got.status.phase is Phase.PASSED
    store.delete_run(NAMESPACE, "first")
    assert [r.name for r in store.list_runs()] == ["second"]
    assert store.get_run(NAMESPACE, "first") is None


def test_a_write_from_a_stale_read_raises_conflict_where_the_store_detects_staleness(
    store_substrate: StoreSubstrate, store: RunStore
) -> None:
    run = _created(store_substrate, store)
    fresh = store.write_status(run, BurnInRunStatus(phase=Phase.RUNNING))
    if store_substrate.detects_stale_writes:
        with pytest.raises(Conflict):
            store.write_status(run, BurnInRunStatus(phase=Phase.FAILED))
        with pytest.raises(Conflict):
            store.write_metadata(run, annotations={"a": "1"})
        stored = store.get_run(NAMESPACE, "run")
        assert stored is not None and _dump(stored) == _dump(fresh)
    else:
        later = store.write_status(run, BurnInRunStatus(phase=Phase.FAILED))
        assert _rv(later) != _rv(fresh)


def test_a_run_handed_out_is_not_changed_by_later_writes(
    store_substrate: StoreSubstrate, store: RunStore
) -> None:
    run = _created(store_substrate, store)
    listed = store.list_runs()
    got = store.get_run(NAMESPACE, "run")
    assert got is not None
    before = [_dump(run), _dump(got), [_dump(r) for r in listed]]
    written = store.write_status(run, BurnInRunStatus(phase=Phase.RUNNING, passed=1))
    written_before = _dump(written)
    meta = store.write_metadata(written, annotations={"a": "1"}, finalizers=[FINALIZER])
    store.write_status(meta, BurnInRunStatus(phase=Phase.PASSED, passed=2))
    assert [_dump(run), _dump(got), [_dump(r) for r in listed]] == before
    assert _dump(written) == written_before


def test_a_run_with_a_finalizer_is_only_marked_deleted_until_its_last_finalizer_goes(
    store_substrate: StoreSubstrate, store: RunStore
) -> None:
    run = _created(store_substrate, store)
    run = store.write_metadata(run, finalizers=[FINALIZER])
    store.delete_run(NAMESPACE, "run")
    marked = store.get_run(NAMESPACE, "run")
    assert marked is not None and marked.metadata.deletion_timestamp is not None
    store.write_metadata(marked, finalizers=[])
    assert store.get_run(NAMESPACE, "run") is None
    store.delete_run(NAMESPACE, "run")  # already gone: not an error


def test_profiles_and_tests_resolve_by_name(
    store_substrate: StoreSubstrate, store: RunStore
) -> None:
    found = store.get_profile(NAMESPACE, "prof")
    assert found is not None and found.metadata.name == "prof"
    assert store.get_profile(NAMESPACE, "no-such-profile") is None
    assert sorted(store.get_tests(NAMESPACE)) == ["burn", "soak"]


def test_deleting_a_run_deletes_the_executions_it_owns(
    substrate: Substrate, backend: Backend
) -> None:
    run = substrate.submit(backend, run_object("run", ("node-000",)))
    uid = run.metadata.uid or ""
    backend.create_execution(execution_spec("owned", "node-000", run_uid=uid))
    backend.create_execution(execution_spec("other", "node-001", run="other", run_uid="uid-o"))
    backend.delete_run(NAMESPACE, "run")
    assert list(backend.executions(NAMESPACE, "run", uid)) == []
    assert [e.name for e in backend.executions(NAMESPACE, "other", "uid-o")] == ["other"]
