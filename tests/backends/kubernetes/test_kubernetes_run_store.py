"""The run store on Kubernetes (backends/kubernetes/run_store.py), over HTTP against the API
stand-in: BurnInRuns as the API keeps them — status through the status subresource, replaced
whole and refused when stale; metadata by merge patch, the status kept; deletion held by
finalizers; profiles and tests from the namespace, the built-in library behind them."""

from __future__ import annotations

from typing import Any

import pytest
from crd_schema import status_problems
from engine_world import profile, run_object, spec_of
from kube_cluster import Journal
from lightkube import Client
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace

from glimmer.api.run import BurnInRunStatus
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.resources import PROFILES, RUNS, TESTS, as_dict
from glimmer.backends.kubernetes.wire import for_cluster
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import Conflict
from glimmer.engine.keys import FINALIZER

API = "burnin.glimmer.ai/v1alpha1"
RUNS_PATH = "/apis/burnin.glimmer.ai/v1alpha1/namespaces/default/burninruns"


def _stored(client: Client, name: str = "run") -> dict[str, Any]:
    return as_dict(client.get(RUNS, name, namespace="default"))


def test_a_status_write_goes_through_the_status_subresource_and_replaces_the_status_whole(
    backend: KubernetesBackend, client: Client, journal: Journal
) -> None:
    run = backend.submit(run_object(targets=["n1"]))
    first = backend.write_status(
        run, BurnInRunStatus(phase=Phase.RUNNING, cordoned_nodes=["n1"], passed=1)
    )
    second = backend.write_status(first, BurnInRunStatus(phase=Phase.RUNNING, passed=2))
    status = _stored(client)["status"]
    assert status == {"phase": "Running", "passed": 2}  # cordonedNodes is gone, not kept
    assert second.status is not None and second.status.cordoned_nodes is None
    writes = [e for e in journal() if e["method"] == "PUT"]
    assert [e["path"] for e in writes] == [f"{RUNS_PATH}/run/status"] * 2
    assert status_problems(status) == []


def test_a_status_write_from_a_stale_read_is_refused_and_the_stored_status_kept(
    backend: KubernetesBackend, client: Client
) -> None:
    run = backend.submit(run_object(targets=["n1"]))
    fresh = backend.write_status(run, BurnInRunStatus(phase=Phase.RUNNING))
    with pytest.raises(Conflict):
        backend.write_status(run, BurnInRunStatus(phase=Phase.FAILED))
    with pytest.raises(Conflict):
        backend.write_metadata(run, finalizers=[FINALIZER])
    assert _stored(client)["metadata"]["resourceVersion"] == fresh.metadata.resource_version
    assert _stored(client)["status"] == {"phase": "Running"}


def test_a_status_the_engine_never_set_sends_no_null(
    backend: KubernetesBackend, client: Client
) -> None:
    run = backend.submit(run_object(targets=["n1"]))
    status = BurnInRunStatus(phase=Phase.PASSED, results=None, conditions=None, fingerprint=None)
    backend.write_status(run, status)
    assert _stored(client)["status"] == for_cluster(status) == {"phase": "Passed"}


def test_a_metadata_write_keeps_the_status_and_sets_finalizers_and_annotations_at_once(
    backend: KubernetesBackend, client: Client, journal: Journal
) -> None:
    run = backend.submit(run_object(targets=["n1"]))
    run = backend.write_status(run, BurnInRunStatus(phase=Phase.RUNNING, passed=3))
    before = len(journal())
    written = backend.write_metadata(run, annotations={"a": "1"}, finalizers=[FINALIZER])
    (patch,) = journal()[before:]
    assert patch["method"] == "PATCH" and not patch["path"].endswith("/status")
    stored = _stored(client)
    assert stored["metadata"]["finalizers"] == [FINALIZER]
    assert stored["metadata"]["annotations"] == {"a": "1"}
    assert stored["status"] == {"phase": "Running", "passed": 3}
    removed = backend.write_metadata(written, annotations={"a": None, "never-set": None})
    assert removed.metadata.annotations is None or "a" not in removed.metadata.annotations
    assert removed.metadata.finalizers == [FINALIZER]


def test_a_run_with_the_finalizer_is_deleted_only_when_the_engine_removes_it(
    backend: KubernetesBackend,
) -> None:
    run = backend.submit(run_object(targets=["n1"]))
    run = backend.write_metadata(run, finalizers=[FINALIZER])
    backend.delete_run("default", "run")
    marked = backend.get_run("default", "run")
    assert marked is not None and marked.metadata.deletion_timestamp is not None
    backend.write_metadata(marked, finalizers=[])
    assert backend.get_run("default", "run") is None
    backend.delete_run("default", "run")


def test_a_name_already_stored_is_a_conflict(backend: KubernetesBackend) -> None:
    backend.submit(run_object(targets=["n1"]))
    with pytest.raises(Conflict):
        backend.submit(run_object(targets=["n2"]))


def test_admission_lists_the_runs_of_every_namespace(
    backend: KubernetesBackend, client: Client
) -> None:
    client.create(Namespace(metadata=ObjectMeta(name="lab")))
    backend.submit(run_object(targets=["n1"]))
    other = run_object("other", targets=["n2"])
    meta = other.metadata.model_copy(update={"namespace": "lab"})
    backend.submit(other.model_copy(update={"metadata": meta}))
    found = sorted((r.metadata.namespace, r.name) for r in backend.list_runs())
    assert found == [("default", "run"), ("lab", "other")]


def test_profiles_and_tests_come_from_the_namespace_and_the_built_in_library_behind_it(
    client: Client,
) -> None:
    builtin = profile([{"testRef": "builtin-test"}], name="builtin")
    backend = KubernetesBackend(
        client, profiles={"builtin": builtin}, tests={"builtin-test": spec_of("gpu-burn")}
    )
    client.create(
        PROFILES.from_dict(for_cluster(profile([{"testRef": "burn"}], name="mine"))),
        namespace="default",
    )
    test = {
        "apiVersion": API,
        "kind": "BurnInTest",
        "metadata": {"name": "burn", "namespace": "default"},
        "spec": {"kind": "gpu-burn", "durationSeconds": 60},
    }
    client.create(TESTS.from_dict(test), namespace="default")
    mine = backend.get_profile("default", "mine")
    assert mine is not None and mine.spec.tests[0].test_ref == "burn"
    assert backend.get_profile("default", "builtin") == builtin
    assert backend.get_profile("default", "nowhere") is None
    tests = backend.get_tests("default")
    assert sorted(tests) == ["builtin-test", "burn"] and tests["burn"].duration_seconds == 60
