"""lightkube's sync client against the stand-in over HTTP: the client K3's substrate uses."""

from __future__ import annotations

import pytest
from lightkube import ApiError, Client, KubeConfig
from lightkube.generic_resource import create_namespaced_resource
from lightkube.models.core_v1 import Container, PodSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Pod
from lightkube.types import PatchType

from tests.k8s_api import K8sAPI

BurnInRun = create_namespaced_resource(
    "burnin.glimmer.ai", "v1alpha1", "BurnInRun", "burninruns", verbs=None
)


def client(api: K8sAPI) -> Client:
    return Client(KubeConfig.from_file(api.kubeconfig), field_manager="glimmer-test")


def run_body(name: str = "smoke") -> dict[str, object]:
    return {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInRun",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"profileRef": "host", "target": {"nodeNames": ["node-a"]}},
    }


def test_a_burninrun_is_created_read_and_patched_over_http(k8s_api: K8sAPI) -> None:
    kc = client(k8s_api)
    created = kc.create(BurnInRun(run_body()))
    assert created.metadata.uid
    assert created.metadata.resourceVersion
    assert created.metadata.generation == 1

    got = kc.get(BurnInRun, "smoke", namespace="default")
    assert got.spec["profileRef"] == "host"
    assert got.metadata.resourceVersion == created.metadata.resourceVersion

    patched = kc.patch(
        BurnInRun,
        "smoke",
        {"spec": {"suspend": True}},
        namespace="default",
        patch_type=PatchType.MERGE,
    )
    assert patched.spec["suspend"] is True
    assert int(patched.metadata.resourceVersion) > int(created.metadata.resourceVersion)
    assert patched.metadata.generation == 2

    status = kc.patch(
        BurnInRun.Status,
        "smoke",
        {"status": {"phase": "Running"}},
        namespace="default",
        patch_type=PatchType.MERGE,
    )
    assert status.status["phase"] == "Running"
    assert status.metadata.generation == 2  # status writes do not count as spec changes


def test_a_pod_is_created_listed_and_its_status_patched_over_http(k8s_api: K8sAPI) -> None:
    kc = client(k8s_api)
    pod = Pod(
        metadata=ObjectMeta(generateName="runner-", namespace="default", labels={"app": "glimmer"}),
        spec=PodSpec(
            containers=[Container(name="runner", image="glimmer/runner:1", command=["true"])]
        ),
    )
    created = kc.create(pod)
    assert created.metadata.name.startswith("runner-")
    assert created.status.phase == "Pending"

    listed = list(kc.list(Pod, namespace="default", labels={"app": "glimmer"}))
    assert [p.metadata.name for p in listed] == [created.metadata.name]

    running = kc.patch(
        Pod.Status,
        created.metadata.name,
        {"status": {"phase": "Running"}},
        namespace="default",
        patch_type=PatchType.MERGE,
    )
    assert running.status.phase == "Running"


def test_creating_the_same_name_twice_is_409_already_exists(k8s_api: K8sAPI) -> None:
    kc = client(k8s_api)
    kc.create(BurnInRun(run_body()))
    with pytest.raises(ApiError) as caught:
        kc.create(BurnInRun(run_body()))
    assert caught.value.status.code == 409
    assert caught.value.status.reason == "AlreadyExists"


def test_lightkube_replace_and_server_side_apply(k8s_api: K8sAPI) -> None:
    kc = client(k8s_api)
    created = kc.create(BurnInRun(run_body()))
    created.spec["suspend"] = True
    replaced = kc.replace(created)
    assert replaced.spec["suspend"] is True
    applied = kc.apply(BurnInRun(run_body("applied")), field_manager="glimmer-test")
    assert applied.metadata.uid
    assert kc.get(BurnInRun, "applied", namespace="default").spec["profileRef"] == "host"


def test_lightkube_watch_with_a_label_selector_from_a_resource_version(k8s_api: K8sAPI) -> None:
    kc = client(k8s_api)
    rv = kc.create(
        Pod(metadata=ObjectMeta(name="before", labels={"run": "x"}), spec=_spec())
    ).metadata.resourceVersion
    kc.create(Pod(metadata=ObjectMeta(name="other", labels={"run": "y"}), spec=_spec()))
    kc.create(Pod(metadata=ObjectMeta(name="after", labels={"run": "x"}), spec=_spec()))
    kc.delete(Pod, "after", namespace="default")
    seen = []
    for kind, pod in kc.watch(Pod, namespace="default", labels={"run": "x"}, resource_version=rv):
        seen.append((kind, pod.metadata.name))
        if len(seen) == 2:
            break
    assert seen == [("ADDED", "after"), ("DELETED", "after")]


def _spec() -> PodSpec:
    return PodSpec(containers=[Container(name="runner", image="glimmer/runner:1")])
