"""The Pod a neutral execution request becomes (backends/kubernetes/podspec.py): the
Kubernetes shape the engine no longer writes — fixed restart policy, hostname placement, the
cordon toleration, the never-evict annotation, host-path volumes, rendezvous DNS."""

from __future__ import annotations

from typing import Any

from engine_world import ScriptedRunner, run_object, spec_of, world

from glimmer.api.k8s import Toleration
from glimmer.backends.kubernetes.podspec import (
    HOSTNAME_LABEL,
    MAX_VOLUME_NAME,
    SAFE_TO_EVICT,
    UNSCHEDULABLE_TAINT,
    pod_of,
    rendezvous_address,
    volume_name,
)
from glimmer.engine.backend import ExecutionSpec
from glimmer.engine.keys import RUN_LABEL

OK = "miscompares=0\nburn finished"
CORDON = {"key": UNSCHEDULABLE_TAINT, "operator": "Exists", "effect": "NoSchedule"}
MOUNTS = {
    "hostPaths": [
        {"path": "/dev/infiniband", "mountPath": "/dev/infiniband", "readOnly": False},
        {"path": "/dev/kmsg", "mountPath": "/dev/kmsg", "type": "CharDevice"},
    ]
}


def _specs(tests: dict[str, Any], targets: list[str], default: str = OK) -> list[ExecutionSpec]:
    entries = [{"testRef": name} for name in tests]
    w = world(len(targets), tests, entries, runner=ScriptedRunner(default=default))
    w.submit(run_object(targets=targets, maxConcurrentNodes=len(targets)))
    w.drive()
    return [e.spec for e in w.backend.executions("default", "run", w.run().metadata.uid)]


def _container(pod: dict[str, Any]) -> dict[str, Any]:
    (container,) = pod["spec"]["containers"]
    assert isinstance(container, dict)
    return container


def test_a_node_execution_is_a_pod_that_never_restarts_pinned_to_its_node_by_hostname() -> None:
    (spec,) = _specs({"a": spec_of("gpu-burn")}, ["node-000"])
    pod = pod_of(spec)
    assert (pod["apiVersion"], pod["kind"]) == ("v1", "Pod")
    assert pod["metadata"]["name"] == spec.name and pod["metadata"]["namespace"] == "default"
    assert pod["metadata"]["labels"][RUN_LABEL] == "run"
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["nodeSelector"] == {HOSTNAME_LABEL: "node-000"}
    assert pod["spec"]["activeDeadlineSeconds"] == spec.deadline_seconds == 600 + 120
    assert "volumes" not in pod["spec"] and "hostname" not in pod["spec"]
    (owner,) = pod["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"]) == ("BurnInRun", "run", spec.run_uid)
    assert _container(pod)["image"] == spec.image
    assert _container(pod)["env"] == [{"name": k, "value": v} for k, v in spec.env]


def test_the_pod_is_never_evicted_by_the_autoscaler_and_tolerates_the_runs_own_cordon() -> None:
    (spec,) = _specs({"a": spec_of("gpu-burn")}, ["node-000"])
    own = Toleration.model_validate({"key": "gpu", "operator": "Exists"})
    pod = pod_of(spec, [own])
    assert pod["metadata"]["annotations"][SAFE_TO_EVICT] == "false"
    assert pod["spec"]["tolerations"] == [{"key": "gpu", "operator": "Exists"}, CORDON]
    assert pod_of(spec)["spec"]["tolerations"] == [CORDON]


def test_host_paths_become_volumes_named_after_their_mount_path() -> None:
    (spec,) = _specs({"m": spec_of(runner=MOUNTS)}, ["node-000"])
    pod = pod_of(spec)
    assert pod["spec"]["volumes"] == [
        {"name": "host-0-dev-infiniband", "hostPath": {"path": "/dev/infiniband"}},
        {"name": "host-1-dev-kmsg", "hostPath": {"path": "/dev/kmsg", "type": "CharDevice"}},
    ]
    assert _container(pod)["volumeMounts"] == [
        {"name": "host-0-dev-infiniband", "mountPath": "/dev/infiniband", "readOnly": False},
        {"name": "host-1-dev-kmsg", "mountPath": "/dev/kmsg", "readOnly": True},
    ]


def test_a_volume_name_is_a_bounded_dns_label() -> None:
    name = volume_name(3, "/" + "Very/Long_Path" * 10)
    assert len(name) <= MAX_VOLUME_NAME and name.startswith("host-3-very-long-path")
    assert not name.endswith("-")


def test_privileges_resources_command_and_probe_land_on_the_runner_container() -> None:
    test = spec_of(
        "gpu-burn",
        hostNetwork=True,
        resources={"limits": {"nvidia.com/gpu": 8, "memory": "16Gi"}},
        runner={
            "command": ["/bin/burn"],
            "args": ["--all"],
            "privileged": True,
            "runAsUser": 0,
            "priorityClassName": "burnin",
            "readinessProbe": {"exec": {"command": ["true"]}},
        },
    )
    (spec,) = _specs({"a": test}, ["node-000"])
    pod = pod_of(spec)
    container = _container(pod)
    assert (container["command"], container["args"]) == (["/bin/burn"], ["--all"])
    assert container["securityContext"] == {"privileged": True, "runAsUser": 0}
    assert container["resources"] == {"limits": {"nvidia.com/gpu": "8", "memory": "16Gi"}}
    assert container["readinessProbe"] == {"exec": {"command": ["true"]}}
    assert pod["spec"]["hostNetwork"] is True and pod["spec"]["priorityClassName"] == "burnin"
    assert "dnsPolicy" not in pod["spec"]  # no rendezvous, so no service name to resolve
    assert spec.resources.gpus == 8


PAIR = spec_of("ib-write-bw", scope="Pair", hostNetwork=True)
LINK_OK = "bandwidthGbps=390\nlink ok"


def test_a_rendezvous_pod_is_resolvable_by_role_under_its_headless_service() -> None:
    specs = _specs({"p": PAIR}, ["node-000", "node-001"], default=LINK_OK)
    server = next(s for s in specs if s.role == "server")
    pod = pod_of(server)
    assert pod["spec"]["hostname"] == "server" and pod["spec"]["subdomain"] == server.service
    # On the host network, cluster DNS (so the service name) is only used when asked for.
    assert pod["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"


def test_the_rendezvous_address_is_the_services_dns_name_without_cluster_local() -> None:
    assert rendezvous_address("lab", "bp-svc", "client") == "client.bp-svc.lab.svc"
    assert rendezvous_address("lab", "bp-svc", "rank-0") == "rank-0.bp-svc.lab.svc"
    assert rendezvous_address("default", "bp-x", "server") == "server.bp-x.default.svc"
