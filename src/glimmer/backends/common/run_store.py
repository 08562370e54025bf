"""BurnInRuns as files: the run store for substrates that have none of their own (this host,
Slurm, and the simulator CLI when runs must outlive the process).

One JSON file per run, ``<root>/<namespace>/<name>.json``. Every write is atomic — written to
a temporary file beside it, flushed to disk, then renamed over it — so a crash mid-write leaves
the previous file whole, never half of one. A write holds the run's own lock
(``<name>.lock``, ``fcntl.flock``) from its read to its rename, and is refused with
:class:`~glimmer.engine.backend.Conflict` when the run changed since the caller read it (its
``resourceVersion``), so two processes driving the same run cannot lose each other's updates.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.api.test import BurnInTestSpec
from glimmer.backends.base import apply_annotations
from glimmer.engine.backend import Conflict, NotFound

SUFFIX = ".json"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class FileRunStore:
    """A :class:`~glimmer.engine.backend.RunStore` over a directory."""

    def __init__(
        self,
        root: Path,
        *,
        now: Callable[[], datetime] = _utc_now,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
    ) -> None:
        self.root = Path(root)
        self.now = now
        self.profiles = dict(profiles or {})
        self.tests = dict(tests or {})

    # -- files ----------------------------------------------------------------------------------
    def _path(self, namespace: str, name: str) -> Path:
        return self.root / (namespace or "default") / f"{name}{SUFFIX}"

    @contextmanager
    def _locked(self, namespace: str, name: str) -> Iterator[Path]:
        path = self._path(namespace, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield path
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    @staticmethod
    def _read(path: Path) -> BurnInRun | None:
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        return BurnInRun.model_validate_json(text)

    @staticmethod
    def _write(path: Path, run: BurnInRun) -> None:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as out:
                out.write(run.model_dump_json(by_alias=True, exclude_none=True))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)  # atomic: readers see the old file or the new, never half
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _store(self, path: Path, run: BurnInRun, previous: BurnInRun | None) -> BurnInRun:
        rv = int(previous.metadata.resource_version or 0) + 1 if previous is not None else 1
        meta = run.metadata.model_copy(update={"resource_version": str(rv)})
        stored = run.model_copy(update={"metadata": meta})
        self._write(path, stored)
        return stored

    @staticmethod
    def _check(run: BurnInRun, stored: BurnInRun | None) -> BurnInRun:
        if stored is None or stored.metadata.uid != run.metadata.uid:
            raise NotFound(f"BurnInRun {run.name} not found")
        if stored.metadata.resource_version != run.metadata.resource_version:
            raise Conflict(f"BurnInRun {run.name} was modified; re-read it")
        return stored

    # -- the store ------------------------------------------------------------------------------
    def create_run(self, run: BurnInRun) -> BurnInRun:
        """Store a new run (creationTimestamp and generation filled when missing); a run of
        that name already stored is a :class:`Conflict`."""
        namespace = run.metadata.namespace or "default"
        update: dict[str, object] = {"namespace": namespace}
        if run.metadata.creation_timestamp is None:
            update["creation_timestamp"] = self.now()
        if run.metadata.generation is None:
            update["generation"] = 1
        run = run.model_copy(update={"metadata": run.metadata.model_copy(update=update)})
        with self._locked(namespace, run.name) as path:
            if path.exists():
                raise Conflict(f"BurnInRun {run.name} already exists")
            return self._store(path, run, None)

    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        return self._read(self._path(namespace, name))

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

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        namespace = run.metadata.namespace or "default"
        with self._locked(namespace, run.name) as path:
            stored = self._check(run, self._read(path))
            return self._store(path, stored.model_copy(update={"status": status}), stored)

    def write_metadata(
        self,
        run: BurnInRun,
        *,
        annotations: Mapping[str, str | None] | None = None,
        finalizers: Sequence[str] | None = None,
    ) -> BurnInRun:
        namespace = run.metadata.namespace or "default"
        with self._locked(namespace, run.name) as path:
            stored = self._check(run, self._read(path))
            old = stored.metadata
            meta = old.model_copy(
                update={
                    "annotations": apply_annotations(old.annotations, annotations) or None,
                    "finalizers": list(finalizers) if finalizers is not None else old.finalizers,
                }
            )
            updated = stored.model_copy(update={"metadata": meta})
            if meta.deletion_timestamp is not None and not meta.finalizers:
                path.unlink(missing_ok=True)  # the last finalizer gone: the delete completes
                return updated
            return self._store(path, updated, stored)

    def delete_run(self, namespace: str, name: str) -> None:
        """Delete the run; one with finalizers is only marked (deletionTimestamp) until the
        engine removes them."""
        with self._locked(namespace, name) as path:
            stored = self._read(path)
            if stored is None:
                return
            if stored.metadata.finalizers:
                if stored.metadata.deletion_timestamp is None:
                    meta = stored.metadata.model_copy(update={"deletion_timestamp": self.now()})
                    self._store(path, stored.model_copy(update={"metadata": meta}), stored)
                return
            path.unlink(missing_ok=True)

    def get_profile(self, namespace: str, name: str) -> BurnInProfile | None:
        return self.profiles.get(name)

    def get_tests(self, namespace: str) -> Mapping[str, BurnInTestSpec]:
        return self.tests
