"""The kubelet stand-in runs a pod's container as a real process and reports it through the API:
every test here creates, reads and deletes pods with lightkube over HTTP against a fresh
stand-in cluster (API + kubelet + nodes in network namespaces; root, as CI is)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lightkube import ApiError, Client, KubeConfig
from lightkube.resources.core_v1 import Node, Pod
from lightkube.types import PatchType

from glimmer.contract.images import RUNNER
from tools.k8s_standin.cluster import StandInCluster, standin_cluster

HOSTNAME = "kubernetes.io/hostname"
CORDON_TOLERATION = {
    "key": "node.kubernetes.io/unschedulable",
    "operator": "Exists",
    "effect": "NoSchedule",
}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[StandInCluster]:
    with standin_cluster(2, tmp_path) as c:
        yield c


@pytest.fixture
def client(cluster: StandInCluster) -> Client:
    return Client(KubeConfig.from_file(cluster.kubeconfig))


def _pod(name: str, command: list[str], *, node: str | None = "node-1", **spec: Any) -> Pod:
    container: dict[str, Any] = {"name": "runner", "image": "busybox:1.36", "command": command}
    container.update(spec.pop("container", {}))
    body: dict[str, Any] = {"restartPolicy": "Never", "containers": [container], **spec}
    if node is not None and "nodeName" not in spec:
        body["nodeSelector"] = {HOSTNAME: node}
    return Pod.from_dict({"metadata": {"name": name, "namespace": "default"}, "spec": body})


def _wait(what: str, probe: Callable[[], Any], timeout: float = 60.0) -> Any:
    """``probe()``'s first truthy answer; a failure naming ``what`` when none comes."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = probe()
        if got:
            return got
        time.sleep(0.05)
    pytest.fail(f"{what}: not within {timeout} s")


def _phase(client: Client, name: str, *phases: str) -> Pod:
    def probe() -> Pod | None:
        pod = client.get(Pod, name, namespace="default")
        return pod if pod.status and pod.status.phase in phases else None

    return _wait(f"pod {name} in {phases}", probe)  # type: ignore[no-any-return]


def _log(client: Client, name: str) -> str:
    return "".join(client.log(name, namespace="default"))


def test_a_pod_runs_as_a_process_and_its_log_and_exit_code_come_back_through_the_api(
    cluster: StandInCluster, client: Client
) -> None:
    env = [
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "GREETING", "value": "hello"},
    ]
    command = ["sh", "-c", 'echo "$GREETING from $NODE at $IP"; echo to-stderr >&2']
    client.create(_pod("ok", command, node="node-2", container={"env": env}))
    pod = _phase(client, "ok", "Succeeded")
    assert pod.spec is not None and pod.status is not None
    state = pod.status.containerStatuses[0].state
    assert state.terminated is not None
    assert (state.terminated.exitCode, state.terminated.reason) == (0, "Completed")
    address = cluster.addresses["node-2"]
    assert pod.status.podIP == address
    assert _log(client, "ok").splitlines() == [f"hello from node-2 at {address}", "to-stderr"]


def test_a_failing_command_fails_the_pod_with_its_exit_code(client: Client) -> None:
    client.create(_pod("bad", ["sh", "-c", "echo dying; exit 3"]))
    pod = _phase(client, "bad", "Failed")
    terminated = pod.status.containerStatuses[0].state.terminated  # type: ignore[union-attr]
    assert terminated is not None
    assert (terminated.exitCode, terminated.reason) == (3, "Error")
    assert _log(client, "bad") == "dying\n"


def _ready(client: Client, name: str) -> bool:
    pod = client.get(Pod, name, namespace="default")
    conditions = {c.type: c.status for c in (pod.status.conditions or [])}  # type: ignore[union-attr]
    return conditions.get("Ready") == "True"


def test_an_exec_readiness_probe_gates_ready(client: Client, tmp_path: Path) -> None:
    gate = tmp_path / "go"
    command = ["sh", "-c", f"while [ ! -f {gate} ]; do sleep 0.05; done; touch ready; sleep 60"]
    probe = {"exec": {"command": ["test", "-f", "ready"]}, "periodSeconds": 1}
    work = str(tmp_path / "work")
    client.create(_pod("gated", command, container={"readinessProbe": probe, "workingDir": work}))
    _phase(client, "gated", "Running")
    assert not _ready(client, "gated")  # the probe cannot pass before the gate opens
    gate.touch()
    _wait("Ready after the probe passes", lambda: _ready(client, "gated"))


def test_a_tcp_socket_readiness_probe_gates_ready(client: Client, tmp_path: Path) -> None:
    gate = tmp_path / "go"
    listen = (
        "import os, socket, time\n"
        f"while not os.path.exists({str(gate)!r}): time.sleep(0.05)\n"
        "s = socket.create_server(('0.0.0.0', 8123)); time.sleep(60)\n"
    )
    probe = {"tcpSocket": {"port": "http"}, "periodSeconds": 1}
    container = {"readinessProbe": probe, "ports": [{"name": "http", "containerPort": 8123}]}
    client.create(_pod("listener", ["python3", "-c", listen], container=container))
    _phase(client, "listener", "Running")
    assert not _ready(client, "listener")
    gate.touch()
    _wait("Ready once the port listens", lambda: _ready(client, "listener"))


def _alive(pid: int) -> bool:
    """Running and not a zombie; a process that ends while being looked at is not alive."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone (ENOENT), or going as it is read (ESRCH)
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _start_doomed(client: Client, tmp_path: Path, **spec: Any) -> int:
    pid_file = tmp_path / "pid"
    # "$$$$" is the shell's "$$" once the kubelet's $(VAR) expansion has unescaped it.
    command = ["sh", "-c", f"echo $$$$ > {pid_file}; exec sleep 600"]
    client.create(_pod("doomed", command, **spec))
    _phase(client, "doomed", "Running")
    pid = int(_wait("the pid file", lambda: pid_file.exists() and pid_file.read_text().strip()))
    assert _alive(pid)
    return pid


def _gone(client: Client, name: str) -> bool:
    try:
        client.get(Pod, name, namespace="default")
    except ApiError as e:
        return e.status.code == 404
    return False


def test_deleting_a_pod_kills_its_process_and_the_pod_goes(client: Client, tmp_path: Path) -> None:
    pid = _start_doomed(client, tmp_path)
    client.delete(Pod, "doomed", namespace="default")
    _wait("the pod deleted", lambda: _gone(client, "doomed"))
    _wait("the process killed", lambda: not _alive(pid))


def test_a_bound_pod_deleted_gracefully_goes_only_once_its_process_is_dead(
    client: Client, tmp_path: Path
) -> None:
    pid = _start_doomed(client, tmp_path, node=None, nodeName="node-1")
    client.delete(Pod, "doomed", namespace="default")
    # The API keeps a bound pod, terminating, until its kubelet confirms with grace period 0,
    # which this kubelet does once the process has exited.
    _wait("the pod deleted", lambda: _gone(client, "doomed"))
    assert not _alive(pid)


def test_active_deadline_fails_the_pod_deadline_exceeded(client: Client) -> None:
    client.create(_pod("slow", ["sleep", "600"], activeDeadlineSeconds=3))
    pod = _phase(client, "slow", "Failed")
    assert pod.status is not None
    assert pod.status.reason == "DeadlineExceeded"
    terminated = pod.status.containerStatuses[0].state.terminated
    assert terminated is not None and terminated.exitCode == 143  # SIGTERM ended it


def test_an_image_the_stand_in_cannot_run_says_so_on_the_pod(client: Client) -> None:
    client.create(_pod("imageonly", []))

    def waiting() -> Any:
        pod = client.get(Pod, "imageonly", namespace="default")
        statuses = (pod.status.containerStatuses if pod.status else None) or []
        state = statuses[0].state.waiting if statuses else None
        return state if state is not None and state.reason != "ContainerCreating" else None

    state = _wait("a waiting reason", waiting)
    assert state.reason == "StandInCannotRunImage"
    assert "busybox:1.36" in state.message
    assert client.get(Pod, "imageonly", namespace="default").status.phase == "Pending"  # type: ignore[union-attr]


def test_a_glimmer_runner_image_without_a_command_runs_the_runner_of_its_kind(
    client: Client,
) -> None:
    container = {
        "image": RUNNER.reference("fingerprint-probe"),
        "env": [{"name": "FINGERPRINT_PROBE_SYSFS", "value": "/sys"}],
    }
    client.create(_pod("probe", [], container=container))
    pod = _phase(client, "probe", "Succeeded", "Failed")
    assert pod.status.phase == "Succeeded", _log(client, "probe")  # type: ignore[union-attr]
    lines = _log(client, "probe").splitlines()
    assert "acceleratorCount=0" in lines
    assert lines[-1] == "FINGERPRINT_PROBE_PASS"


def test_a_pod_bound_to_an_unknown_node_stays_pending(client: Client) -> None:
    client.create(_pod("lost", ["true"], node=None, nodeName="node-9"))
    client.create(_pod("found", ["true"]))
    _phase(client, "found", "Succeeded")  # the kubelet has seen both pods by now
    lost = client.get(Pod, "lost", namespace="default")
    assert lost.status is not None and lost.status.phase == "Pending"
    assert not lost.status.containerStatuses


def _cordon(client: Client, node: str) -> None:
    client.patch(Node, node, {"spec": {"unschedulable": True}}, patch_type=_merge())


def _merge() -> PatchType:
    return PatchType.MERGE


def _scheduled_condition(client: Client, name: str) -> Any:
    pod = client.get(Pod, name, namespace="default")
    for c in (pod.status.conditions if pod.status else None) or []:
        if c.type == "PodScheduled" and c.status == "False":
            return c
    return None


def test_a_cordoned_node_takes_only_pods_that_tolerate_it_or_name_it(client: Client) -> None:
    _cordon(client, "node-1")
    client.create(_pod("intolerant", ["true"]))
    condition = _wait("Unschedulable", lambda: _scheduled_condition(client, "intolerant"))
    assert condition.reason == "Unschedulable"
    assert "node.kubernetes.io/unschedulable" in condition.message
    client.create(_pod("tolerant", ["true"], tolerations=[CORDON_TOLERATION]))
    _phase(client, "tolerant", "Succeeded")
    # spec.nodeName bypasses the scheduler, as on a real kubelet.
    client.create(_pod("named", ["true"], node=None, nodeName="node-1"))
    _phase(client, "named", "Succeeded")


def test_a_pod_no_node_fits_is_unschedulable_until_one_does(client: Client) -> None:
    client.create(_pod("waits", ["true"], node="node-3"))
    condition = _wait("Unschedulable", lambda: _scheduled_condition(client, "waits"))
    assert "didn't match Pod's node affinity/selector" in condition.message
    client.patch(
        Node, "node-2", {"metadata": {"labels": {HOSTNAME: "node-3"}}}, patch_type=_merge()
    )
    _phase(client, "waits", "Succeeded")


def test_the_pod_still_settles_when_every_third_write_is_refused(tmp_path: Path) -> None:
    with standin_cluster(1, tmp_path, conflict_every=3) as c:
        client = Client(KubeConfig.from_file(c.kubeconfig))
        for _ in range(10):  # the test's own create may be the refused write
            try:
                client.create(_pod("stubborn", ["sh", "-c", "exit 5"]))
                break
            except ApiError as e:
                assert e.status.code == 409, e
        pod = _phase(client, "stubborn", "Failed")
        terminated = pod.status.containerStatuses[0].state.terminated  # type: ignore[union-attr]
        assert terminated is not None and terminated.exitCode == 5


def test_on_the_host_network_every_nodes_pods_run_at_127_0_0_1(tmp_path: Path) -> None:
    with standin_cluster(2, tmp_path, network="host") as c:
        assert c.prefix is None
        client = Client(KubeConfig.from_file(c.kubeconfig))
        env = [{"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
        client.create(
            _pod("local", ["sh", "-c", "echo $IP"], node="node-2", container={"env": env})
        )
        pod = _phase(client, "local", "Succeeded")
        assert pod.status is not None and pod.status.podIP == "127.0.0.1"
        assert _log(client, "local") == "127.0.0.1\n"


def test_the_deadline_also_ends_a_pod_whose_container_never_started(client: Client) -> None:
    client.create(_pod("stuck", [], activeDeadlineSeconds=1))
    pod = _phase(client, "stuck", "Failed")
    assert pod.status is not None and pod.status.reason == "DeadlineExceeded"
    waiting = pod.status.containerStatuses[0].state.waiting
    assert waiting is not None and waiting.reason == "StandInCannotRunImage"


def test_a_new_pod_of_an_old_pods_name_has_a_log_of_its_own(client: Client) -> None:
    client.create(_pod("again", ["echo", "first"]))
    _phase(client, "again", "Succeeded")
    client.delete(Pod, "again", namespace="default")
    _wait("the first pod deleted", lambda: _gone(client, "again"))
    client.create(_pod("again", ["echo", "second"]))
    _phase(client, "again", "Succeeded")
    assert _log(client, "again") == "second\n"


def test_host_health_runs_from_its_image_with_the_host_profiles_kmsg_mount(client: Client) -> None:
    # The host profile's host-kernel-and-links test, shortened: privileged, host network,
    # /dev/kmsg as a CharDevice hostPath at its own path.
    container = {
        "image": RUNNER.reference("host-health"),
        "env": [{"name": "BURNIN_DURATION_SECONDS", "value": "2"}],
        "securityContext": {"privileged": True, "runAsUser": 0},
        "volumeMounts": [{"name": "host-0-dev-kmsg", "mountPath": "/dev/kmsg", "readOnly": True}],
    }
    volume = {"name": "host-0-dev-kmsg", "hostPath": {"path": "/dev/kmsg", "type": "CharDevice"}}
    client.create(_pod("health", [], container=container, volumes=[volume], hostNetwork=True))
    pod = _phase(client, "health", "Succeeded", "Failed")
    said = _log(client, "health")
    assert pod.status is not None and pod.status.phase == "Succeeded", said
    assert said.splitlines()[-1] == "HOST_HEALTH_OK"


def test_leaving_the_cluster_kills_even_a_force_deleted_pods_process_still_in_its_grace(
    tmp_path: Path,
) -> None:
    stubborn = f"trap '' TERM; echo $$$$ > {tmp_path / 'pid'}; while :; do sleep 0.1; done"
    with standin_cluster(1, tmp_path / "c", network="host") as c:
        client = Client(KubeConfig.from_file(c.kubeconfig))
        pid = _start_doomed(client, tmp_path, container={"command": ["sh", "-c", stubborn]},
                            terminationGracePeriodSeconds=600)  # fmt: skip
        # Grace period 0: the API forgets the pod at once; the kubelet still owes the kill.
        client.delete(Pod, "doomed", namespace="default", grace_period=0)
        _wait("the pod deleted", lambda: _gone(client, "doomed"))
        assert _alive(pid)  # it ignores SIGTERM, and its grace period is long
    assert not _alive(pid)


def test_a_command_that_is_not_there_fails_the_pod_with_a_start_error(client: Client) -> None:
    client.create(_pod("typo", ["no-such-program", "--flag"]))
    pod = _phase(client, "typo", "Failed")
    terminated = pod.status.containerStatuses[0].state.terminated  # type: ignore[union-attr]
    assert terminated is not None
    assert (terminated.exitCode, terminated.reason) == (128, "StartError")
    assert terminated.message == 'exec: "no-such-program": executable file not found in $PATH'


def test_the_scheduler_binds_through_pods_binding_so_the_api_shows_the_node(
    client: Client,
) -> None:
    client.create(_pod("placed", ["true"], node="node-2"))
    pod = _phase(client, "placed", "Succeeded")
    assert pod.spec is not None and pod.spec.nodeName == "node-2"


def test_without_pods_binding_the_kubelet_still_runs_the_pod_where_it_chose(
    tmp_path: Path,
) -> None:
    with standin_cluster(2, tmp_path, network="host", pod_binding=False) as c:
        client = Client(KubeConfig.from_file(c.kubeconfig))
        env = [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
        client.create(_pod("kept", ["sh", "-c", "echo $NODE"], node="node-2",
                           container={"env": env}))  # fmt: skip
        pod = _phase(client, "kept", "Succeeded")
        assert pod.spec is not None and not pod.spec.nodeName  # the API could not be told
        assert _log(client, "kept") == "node-2\n"
