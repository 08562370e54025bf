"""BurnInRuns, BurnInProfiles and BurnInTests as the API server keeps them (the engine's
``RunStore``).

* **reads** are GETs and LISTs, never a cache: admission lists every run in every namespace
  fresh (§2.2), and a pass starts from the run as stored;
* **status** is written through the ``status`` subresource by a PUT of the whole run carrying
  the resourceVersion it was read at: the API server refuses it (409,
  :class:`~glimmer.engine.backend.Conflict`) when the run changed since, and replaces the
  status wholesale, so a field the new status leaves out is gone (a merge would keep the old
  value). The body is :func:`~glimmer.backends.kubernetes.wire.for_cluster`'s — no ``null``
  where the CRD says array or object;
* **metadata** (annotations, finalizers) is one JSON merge patch with the same
  resourceVersion precondition; writes to the main resource leave the status as stored;
* **delete** is the API's: a run with finalizers is marked (``deletionTimestamp``) and goes
  when the engine removes the last one.

Profiles and tests are the namespace's objects; ``profiles`` and ``tests`` given to the store
(the built-in library) answer a name the namespace does not hold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from lightkube import ALL_NS, Client
from lightkube.types import PatchType
from pydantic import BaseModel, ValidationError

from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun, BurnInRunStatus
from glimmer.api.test import BurnInTest, BurnInTestSpec
from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import PROFILES, RUNS, TESTS, as_dict
from glimmer.backends.kubernetes.wire import for_cluster
from glimmer.engine.backend import BackendError, NotFound

M = TypeVar("M", bound=BaseModel)


def parsed(model: type[M], data: Mapping[str, Any], what: str) -> M:
    """``data`` from the server as ``model``; an object no model accepts is a
    :class:`BackendError` naming it (never skipped: admission must not read it as free)."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise BackendError(f"{what} as stored is not valid: {e}") from e


def status_body(run: BurnInRun, status: BurnInRunStatus) -> dict[str, Any]:
    """The PUT body of a status write: the run as read (its resourceVersion the
    precondition) with ``status`` in place of its own."""
    body = for_cluster(run)
    body.pop("status", None)
    # The server keeps the field ownership it holds when an update carries none: no need to
    # send back what may be the largest part of the object.
    body["metadata"].pop("managedFields", None)
    body["status"] = for_cluster(status)  # {} for an all-default status: present, empty
    return body


def metadata_patch(
    run: BurnInRun,
    annotations: Mapping[str, str | None] | None,
    finalizers: Sequence[str] | None,
) -> dict[str, Any]:
    """The merge patch of a metadata write (None deletes an annotation)."""
    meta: dict[str, Any] = {"resourceVersion": run.metadata.resource_version}
    if annotations:
        held = run.metadata.annotations or {}
        meta["annotations"] = {k: v for k, v in annotations.items() if v is not None or k in held}
    if finalizers is not None:
        meta["finalizers"] = list(finalizers)
    return {"metadata": meta}


class KubeRunStore:
    """Runs, profiles and tests through ``client``; ``profiles`` and ``tests`` answer names
    the cluster does not hold (the built-in library)."""

    def __init__(
        self,
        client: Client,
        *,
        profiles: Mapping[str, BurnInProfile] | None = None,
        tests: Mapping[str, BurnInTestSpec] | None = None,
    ) -> None:
        self.client = client
        self.profiles = dict(profiles or {})
        self.tests = dict(tests or {})

    def _run(self, data: Mapping[str, Any]) -> BurnInRun:
        meta = data.get("metadata") or {}
        return parsed(BurnInRun, data, f"BurnInRun {meta.get('namespace')}/{meta.get('name')}")

    def create_run(self, run: BurnInRun) -> BurnInRun:
        """Store a new run (the server fills uid, resourceVersion and creationTimestamp); a
        run of that name already stored is a :class:`Conflict`."""
        namespace = run.metadata.namespace or "default"
        body = for_cluster(run)
        body["metadata"]["namespace"] = namespace
        with api_call(f"create BurnInRun {namespace}/{run.name}"):
            return self._run(as_dict(self.client.create(RUNS.from_dict(body), namespace=namespace)))

    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        try:
            with api_call(f"get BurnInRun {namespace}/{name}"):
                found = self.client.get(RUNS, name, namespace=namespace or "default")
        except NotFound:
            return None
        return self._run(as_dict(found))

    def list_runs(self) -> list[BurnInRun]:
        with api_call("list BurnInRuns"):
            found = [as_dict(r) for r in self.client.list(RUNS, namespace=ALL_NS)]
        return [self._run(r) for r in found]

    def write_status(self, run: BurnInRun, status: BurnInRunStatus) -> BurnInRun:
        namespace = run.metadata.namespace or "default"
        body = status_body(run, status)
        with api_call(f"write the status of BurnInRun {namespace}/{run.name}"):
            stored = self.client.replace(RUNS.Status.from_dict(body), run.name, namespace=namespace)
        return self._run(as_dict(stored))

    def write_metadata(
        self,
        run: BurnInRun,
        *,
        annotations: Mapping[str, str | None] | None = None,
        finalizers: Sequence[str] | None = None,
    ) -> BurnInRun:
        namespace = run.metadata.namespace or "default"
        patch = metadata_patch(run, annotations, finalizers)
        with api_call(f"patch BurnInRun {namespace}/{run.name}"):
            stored = self.client.patch(
                RUNS, run.name, patch, namespace=namespace, patch_type=PatchType.MERGE
            )
        return self._run(as_dict(stored))

    def delete_run(self, namespace: str, name: str) -> None:
        try:
            with api_call(f"delete BurnInRun {namespace}/{name}"):
                self.client.delete(RUNS, name, namespace=namespace or "default")
        except NotFound:
            pass

    def get_profile(self, namespace: str, name: str) -> BurnInProfile | None:
        try:
            with api_call(f"get BurnInProfile {namespace}/{name}"):
                found = self.client.get(PROFILES, name, namespace=namespace or "default")
        except NotFound:
            return self.profiles.get(name)
        return parsed(BurnInProfile, as_dict(found), f"BurnInProfile {namespace}/{name}")

    def get_tests(self, namespace: str) -> Mapping[str, BurnInTestSpec]:
        with api_call(f"list BurnInTests of {namespace}"):
            found = [as_dict(t) for t in self.client.list(TESTS, namespace=namespace)]
        tests = dict(self.tests)
        for data in found:
            test = parsed(BurnInTest, data, f"BurnInTest {namespace}/{data['metadata']['name']}")
            tests[test.name] = test.spec
        return tests
