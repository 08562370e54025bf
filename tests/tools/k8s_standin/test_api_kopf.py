"""A tiny kopf operator against the stand-in (KopfRunner in a thread, over HTTP): the finalizer,
the create handler run once, the non-optional delete handler, and a server-side label filter —
where kopf depends on resourceVersion, 422 on a failed patch test and watch semantics."""

from __future__ import annotations

from typing import Any

import httpx
import kopf
from kopf.testing import KopfRunner

from tests.k8s_api import K8sAPI
from tests.tools.k8s_standin.conftest import RUNS, eventually, run_body

GROUP, VERSION, PLURAL = "burnin.glimmer.ai", "v1alpha1", "burninruns"
FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"


def operator(calls: list[str]) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry)(kopf.login_with_kubeconfig)

    @kopf.on.create(GROUP, VERSION, PLURAL, registry=registry, id="run_created")
    def created(name: str, patch: kopf.Patch, **_: Any) -> None:
        calls.append(f"create {name}")
        patch.metadata.setdefault("labels", {})["glimmer.ai/seen"] = "true"

    @kopf.on.delete(GROUP, VERSION, PLURAL, registry=registry, id="run_deleted")
    def deleted(name: str, **_: Any) -> None:
        calls.append(f"delete {name}")

    return registry


def settings(label_selector: str | None = None) -> kopf.OperatorSettings:
    s = kopf.OperatorSettings()
    s.posting.enabled = False
    if label_selector:
        # The tuple key: kopf 1.45 misreads the 'group/plural' string form (the trial note).
        s.watching.label_selectors[(GROUP, PLURAL)] = label_selector
    return s


def runner(registry: kopf.OperatorRegistry, s: kopf.OperatorSettings) -> KopfRunner:
    return KopfRunner(
        ["run", "--standalone", "--all-namespaces", "--verbose"],
        registry=registry,
        settings=s,
        timeout=60,
    )


def test_kopf_adds_its_finalizer_runs_create_once_and_delete_before_the_object_goes(
    k8s_api: K8sAPI, http: httpx.Client
) -> None:
    calls: list[str] = []
    with runner(operator(calls), settings()) as kopf_run:
        http.post(RUNS, json=run_body("smoke"))
        body = eventually(
            lambda: (
                (b := http.get(f"{RUNS}/smoke").json())["metadata"]
                .get("labels", {})
                .get("glimmer.ai/seen")
                and b
            ),
            "the create handler's label",
        )
        assert FINALIZER in body["metadata"]["finalizers"]
        http.delete(f"{RUNS}/smoke")
        eventually(lambda: http.get(f"{RUNS}/smoke").status_code == 404, "the object gone")
    assert kopf_run.exit_code == 0, kopf_run.output
    assert calls == ["create smoke", "delete smoke"]


def test_an_object_that_exists_before_the_operator_starts_is_handled_once(
    k8s_api: K8sAPI, http: httpx.Client
) -> None:
    http.post(RUNS, json=run_body("early"))
    calls: list[str] = []
    with runner(operator(calls), settings()) as kopf_run:
        eventually(lambda: http.get(f"{RUNS}/early").json()["metadata"].get("labels"), "handled")
        http.post(RUNS, json=run_body("late"))
        eventually(lambda: http.get(f"{RUNS}/late").json()["metadata"].get("labels"), "handled")
    assert kopf_run.exit_code == 0, kopf_run.output
    assert sorted(calls) == ["create early", "create late"]


def test_kopf_s_server_side_label_filter_keeps_other_objects_out(
    k8s_api: K8sAPI, http: httpx.Client
) -> None:
    calls: list[str] = []
    with runner(operator(calls), settings("glimmer.ai/managed=yes")) as kopf_run:
        outside = run_body("outside")
        http.post(RUNS, json=outside)
        inside = run_body("inside")
        inside["metadata"]["labels"] = {"glimmer.ai/managed": "yes"}
        http.post(RUNS, json=inside)
        eventually(
            lambda: http.get(f"{RUNS}/inside").json()["metadata"]["labels"].get("glimmer.ai/seen"),
            "handled",
        )
    assert kopf_run.exit_code == 0, kopf_run.output
    assert calls == ["create inside"]
    assert "finalizers" not in http.get(f"{RUNS}/outside").json()["metadata"]
