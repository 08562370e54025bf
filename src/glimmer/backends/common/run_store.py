"""The run store for substrates that have none of their own: the store's rules written once,
over two media — memory (the simulator, tests) and files (this host, Slurm, and the
simulator CLI when runs must outlive the process).

The rules, as an API server keeps them: a write names the ``resourceVersion`` it read and is
refused with :class:`~glimmer.engine.backend.Conflict` when the run changed since (so two
drivers cannot lose each other's updates); creating a name already stored is a Conflict;
deleting a run that still has finalizers only marks it (``deletionTimestamp``) and the delete
completes when the engine removes the last one.

On files: one JSON file per run, ``<root>/<namespace>/<name>.json``. Every write is atomic —
written to a temporary file beside it, flushed to disk, then renamed over it — so a crash
mid-write leaves the previous file whole, never half of one. A write holds the run's own lock
(``<name>.lock``, ``fcntl.flock``) from its read to its rename. A read always reads the file,
but parses it only when its bytes differ from the ones this store last read or wrote, so a
process driving its own run does not re-parse what it has just written. (Not by stat: two
writes within one coarse clock tick can reuse an inode and keep size and mtime, and a stale
copy would then pass the resourceVersion check and lose an update.)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.base import apply_annotations
from glimmer.engine.backend import Conflict, NotFound, RunStore

SUFFIX = ".json"
RunKey = tuple[str, str]


def _utc_now() -> datetime:
    return datetime.now(UTC)


class StoredRuns(ABC):
    """A :class:`~glimmer.engine.backend.RunStore`: the rules, over a medium that loads,
    saves and drops one run under its lock."""

    def __init__(
        self,
        *,
        now: Callable[[], datetime] = _utc_now,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
    ) -> None:
        self.now = now
        self.profiles = dict(profiles or {})
        self.tests = dict(tests or {})

    # -- the medium ---------------------------------------------------------------------------
    @abstractmethod
    def _locked(self, key: RunKey) -> AbstractContextManager[None]:
        """Hold the run's lock from a read to the write that follows it."""

    @abstractmethod
    def _load(self, key: RunKey) -> BurnInRun | None: ...

    @abstractmethod
    def _save(self, key: RunKey, run: BurnInRun) -> None: ...

    @abstractmethod
    def _drop(self, key: RunKey) -> None: ...

    @abstractmethod
    def _next_version(self, previous: BurnInRun | None) -> str:
        """The resourceVersion of the next write of a run (``previous``: as stored now)."""

    @abstractmethod
    def list_runs(self) -> list[BurnInRun]: ...

    # -- the rules ----------------------------------------------------------------------------
    @staticmethod
    def _key(run: BurnInRun) -> RunKey:
        return (run.metadata.namespace or "default", run.name)

    def _store(
        self,
        key: RunKey,
        run: BurnInRun,
        previous: BurnInRun | None,
        changes: Mapping[str, object] | None = None,
    ) -> BurnInRun:
        """Save ``run`` with ``changes`` (fields of the run) and its next resourceVersion: one
        copy of the run for both (a status write, every pass of every run, made three)."""
        meta = run.metadata.model_copy(update={"resource_version": self._next_version(previous)})
        stored = run.model_copy(update={**(changes or {}), "metadata": meta})
        self._save(key, stored)
        return stored

    @staticmethod
    def _check(run: BurnInRun, stored: BurnInRun | None) -> BurnInRun:
        if stored is None or stored.metadata.uid != run.metadata.uid:
            raise NotFound(f"BurnInRun {run.name} not found")
        if stored.metadata.resource_version != run.metadata.resource_version:
            raise Conflict(f"BurnInRun {run.name} was modified; re-read it")
        return stored

    def create_run(self, run: BurnInRun) -> BurnInRun:
        """Store a new run (namespace, creationTimestamp and generation filled when missing);
        a run of that name already stored is a :class:`Conflict`."""
        update: dict[str, object] = {"namespace": run.metadata.namespace or "default"}
        if run.metadata.creation_timestamp is None:
            update["creation_timestamp"] = self.now()
        if run.metadata.generation is None:
            update["generation"] = 1
        run = run.model_copy(update={"metadata": run.metadata.model_copy(update=update)})
        key = self._key(run)
        with self._locked(key):
            if self._load(key) is not None:
                raise Conflict(f"BurnInRun {run.name} already exists")
            return self._store(key, run, None)

    def put_run(self, run: BurnInRun) -> BurnInRun:
        """Store ``run`` over whatever is stored under its name, as a user replacing the object
        does (``kubectl replace``); not a write the engine makes, so nothing is checked."""
        key = self._key(run)
        with self._locked(key):
            return self._store(key, run, self._load(key))

    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        return self._load((namespace or "default", name))

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        key = self._key(run)
        with self._locked(key):
            stored = self._check(run, self._load(key))
            return self._store(key, stored, stored, {"status": status})

    def write_metadata(
        self,
        run: BurnInRun,
        *,
        annotations: Mapping[str, str | None] | None = None,
        finalizers: Sequence[str] | None = None,
    ) -> BurnInRun:
        key = self._key(run)
        with self._locked(key):
            stored = self._check(run, self._load(key))
            old = stored.metadata
            meta = old.model_copy(
                update={
                    "annotations": apply_annotations(old.annotations, annotations) or None,
                    "finalizers": list(finalizers) if finalizers is not None else old.finalizers,
                }
            )
            updated = stored.model_copy(update={"metadata": meta})
            if meta.deletion_timestamp is not None and not meta.finalizers:
                self._drop(key)  # the last finalizer gone: the delete completes
                return updated
            return self._store(key, updated, stored)

    def delete_run(self, namespace: str, name: str) -> None:
        """Delete the run; one with finalizers is only marked (deletionTimestamp) until the
        engine removes them."""
        key = (namespace or "default", name)
        with self._locked(key):
            stored = self._load(key)
            if stored is None:
                return
            if not stored.metadata.finalizers:
                self._drop(key)
            elif stored.metadata.deletion_timestamp is None:
                meta = stored.metadata.model_copy(update={"deletion_timestamp": self.now()})
                self._store(key, stored.model_copy(update={"metadata": meta}), stored)

    def get_profile(self, namespace: str, name: str) -> BurnInProfile | None:
        return self.profiles.get(name)

    def get_tests(self, namespace: str) -> Mapping[str, BurnInTestSpec]:
        return self.tests


class MemoryRunStore(StoredRuns):
    """Runs in a dict, gone with the process; resourceVersions from one counter, as one API
    server's are."""

    def __init__(
        self,
        *,
        now: Callable[[], datetime] = _utc_now,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
    ) -> None:
        super().__init__(now=now, profiles=profiles, tests=tests)
        self.runs: dict[RunKey, BurnInRun] = {}
        self._version = 0
        # One process, one thread: nothing to exclude. One context for every write, as it holds
        # nothing (made afresh, it was a tenth of a status write).
        self._unlocked: AbstractContextManager[None] = contextlib.nullcontext()

    def _locked(self, key: RunKey) -> AbstractContextManager[None]:
        return self._unlocked

    def _load(self, key: RunKey) -> BurnInRun | None:
        return self.runs.get(key)

    def _save(self, key: RunKey, run: BurnInRun) -> None:
        self.runs[key] = run

    def _drop(self, key: RunKey) -> None:
        self.runs.pop(key, None)

    def _next_version(self, previous: BurnInRun | None) -> str:
        self._version += 1
        return str(self._version)

    def list_runs(self) -> list[BurnInRun]:
        return list(self.runs.values())


class FileRunStore(StoredRuns):
    """Runs as files under ``root`` (see the module docstring)."""

    def __init__(
        self,
        root: Path,
        *,
        now: Callable[[], datetime] = _utc_now,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
    ) -> None:
        super().__init__(now=now, profiles=profiles, tests=tests)
        self.root = Path(root)
        self._seen: dict[Path, tuple[bytes, BurnInRun]] = {}

    def path(self, namespace: str, name: str) -> Path:
        """The file that holds ``namespace/name``."""
        return self.root / (namespace or "default") / f"{name}{SUFFIX}"

    @contextmanager
    def _locked(self, key: RunKey) -> Iterator[None]:
        path = self.path(*key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read(self, path: Path) -> BurnInRun | None:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            self._seen.pop(path, None)
            return None
        seen = self._seen.get(path)
        if seen is not None and seen[0] == data:
            return seen[1]  # the very bytes this store last read or wrote: not parsed again
        run = BurnInRun.model_validate_json(data)
        self._seen[path] = (data, run)
        return run

    def _load(self, key: RunKey) -> BurnInRun | None:
        return self._read(self.path(*key))

    def _save(self, key: RunKey, run: BurnInRun) -> None:
        path = self.path(*key)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            data = run.model_dump_json(by_alias=True, exclude_none=True).encode()
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)  # atomic: readers see the old file or the new, never half
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            self._seen.pop(path, None)
            raise
        self._seen[path] = (data, run)

    def _drop(self, key: RunKey) -> None:
        path = self.path(*key)
        path.unlink(missing_ok=True)
        self._seen.pop(path, None)

    def _next_version(self, previous: BurnInRun | None) -> str:
        # Per run, as the file holds no counter of its own; a re-created name starts again at
        # 1, and the engine keys what it remembers by uid as well.
        return str(int(previous.metadata.resource_version or 0) + 1) if previous else "1"

    def list_runs(self) -> list[BurnInRun]:
        if not self.root.is_dir():
            return []
        found = []
        for path in sorted(self.root.glob(f"*/*{SUFFIX}")):
            if path.name.startswith("."):
                continue  # a write in progress (or abandoned by a crash)
            run = self._read(path)
            if run is not None:
                found.append(run)
        return found


class RunsInStore:
    """The run-store part of a backend whose runs live in a store (``store``: a
    :class:`StoredRuns`, or the Kubernetes API server's BurnInRuns):
    each call handed to the store, and :meth:`_forget` told when a run's delete completed, so
    the backend lets go of what it holds for that run (executions, the sinks' outbox)."""

    store: RunStore

    def _forget(self, run: BurnInRun) -> None:
        """The run is gone from the store: drop what the backend holds for it."""

    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        return self.store.get_run(namespace, name)

    def list_runs(self) -> list[BurnInRun]:
        return self.store.list_runs()

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        return self.store.write_status(run, status)

    def write_metadata(
        self,
        run: BurnInRun,
        *,
        annotations: Mapping[str, str | None] | None = None,
        finalizers: Sequence[str] | None = None,
    ) -> BurnInRun:
        written = self.store.write_metadata(run, annotations=annotations, finalizers=finalizers)
        if written.metadata.deletion_timestamp is not None and not written.metadata.finalizers:
            self._forget(written)  # the delete completed
        return written

    def delete_run(self, namespace: str, name: str) -> None:
        held = self.store.get_run(namespace, name)
        self.store.delete_run(namespace, name)
        if held is not None and not held.metadata.finalizers:
            self._forget(held)
