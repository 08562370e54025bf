"""BuildMPIRuntime: every rule the seed states about the worker and the launcher."""

from __future__ import annotations

import json
import re

from trainer_shapes import job, jobs, pod

from glimmer.certify.platform import RuntimeConfig, build_mpi_runtime

ENV = [{"name": "NCCL_DEBUG", "value": "WARN"}]
USER = RuntimeConfig(
    entry_name="nccl",
    image="img:1",
    gpus_per_node=8,
    env=ENV,
    resources={"limits": {"cpu": "32"}},
    volumes=[
        {"name": "data", "emptyDir": {}},
        {"name": "config-volume", "configMap": {"name": "run-config"}},
    ],
    volume_mounts=[
        {"name": "data", "mountPath": "/data"},
        {"name": "config-volume", "mountPath": "/config"},
    ],
    init_containers=[{"name": "prep", "image": "busybox"}],
)


def _worker_script(cfg: RuntimeConfig = USER) -> str:
    script: str = pod(job(build_mpi_runtime(cfg), "node"))["containers"][0]["args"][0]
    return script


def test_mpi_runtime_has_mpi_ml_policy_and_node_plus_launcher_jobs() -> None:
    rt = build_mpi_runtime(USER)
    assert rt["metadata"]["name"] == "nccl-runtime"
    assert rt["metadata"]["labels"] == {"trainer.kubeflow.org/framework": "mpi", "app": "nccl"}
    assert rt["spec"]["mlPolicy"] == {
        "numNodes": 1,
        "mpi": {
            "mpiImplementation": "OpenMPI",
            "numProcPerNode": 8,
            "sshAuthMountPath": "/tmp/mpi-ssh-raw",
        },
    }
    jobset = rt["spec"]["template"]["spec"]
    assert [j["name"] for j in jobs(rt)] == ["node", "launcher"]
    assert jobset["network"] == {"publishNotReadyAddresses": True}
    assert jobset["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["launcher"]}


def test_mpi_worker_runs_sshd_with_ipc_lock_an_ssh_readiness_probe_and_env() -> None:
    worker = pod(job(build_mpi_runtime(USER), "node"))["containers"][0]
    assert worker["name"] == "node"
    assert worker["command"] == ["sh", "-c"]
    assert worker["args"][0].endswith("exec /usr/sbin/sshd -De")
    assert worker["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert worker["readinessProbe"] == {"tcpSocket": {"port": 22}, "initialDelaySeconds": 5}
    assert worker["env"] == ENV


def test_mpi_worker_sshd_install_is_guarded_by_test_x_on_the_exact_exec_path() -> None:
    script = _worker_script()
    guard = script.index("test -x /usr/sbin/sshd ||")
    install = script.index("apt-get install -y --no-install-recommends openssh-server")
    assert guard < install
    assert "which sshd" not in script and "command -v" not in script


def test_mpi_worker_script_steps_are_chained_in_order_so_any_failure_aborts() -> None:
    steps = [s.strip() for s in re.split(r" && (?![^{]*\})", _worker_script())]
    assert steps[0] == "set -x"
    assert steps[2:] == [
        "mkdir -p -m 0755 /var/run/sshd",
        "mkdir -p -m 700 /root/.ssh",
        "cp /tmp/mpi-ssh-raw/* /root/.ssh/",
        "chmod 600 /root/.ssh/id_rsa",
        "chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys",
        "exec /usr/sbin/sshd -De",
    ]


def test_mpi_launcher_runs_mpirun_setup_ssh_keys_and_gets_env() -> None:
    launcher = pod(job(build_mpi_runtime(USER), "launcher"))
    assert launcher["restartPolicy"] == "OnFailure"
    (init,) = launcher["initContainers"]
    assert init["name"] == "fix-ssh-permissions"
    assert init["image"] == "img:1"
    assert "cp /tmp/mpi-ssh-raw/* /root/.ssh/" in init["args"][0]
    container = launcher["containers"][0]
    assert container["name"] == "node"
    assert container["env"] == ENV
    assert {"name": "ssh-keys", "emptyDir": {}} in launcher["volumes"]


def test_mpi_env_goes_on_both_containers_as_container_env() -> None:
    rt = build_mpi_runtime(USER)
    for name in ("node", "launcher"):
        assert pod(job(rt, name))["containers"][0]["env"] == ENV


def test_mpi_user_volumes_mounts_and_init_containers_go_on_the_worker_after_builtins() -> None:
    worker = pod(job(build_mpi_runtime(USER), "node"))
    assert [v["name"] for v in worker["volumes"]] == ["dshm", "data", "config-volume"]
    mounts = worker["containers"][0]["volumeMounts"]
    assert [m["name"] for m in mounts] == ["mpi-ssh-auth", "dshm", "data", "config-volume"]
    assert mounts[0] == {"name": "mpi-ssh-auth", "mountPath": "/tmp/mpi-ssh-raw", "readOnly": True}
    assert worker["initContainers"] == [{"name": "prep", "image": "busybox"}]


def test_mpi_launcher_gets_none_of_the_user_volumes_mounts_or_init_containers() -> None:
    cfg = RuntimeConfig(
        entry_name="n",
        image="i",
        volumes=[{"name": "hp", "emptyDir": {"medium": "HugePages"}}],
        volume_mounts=[{"name": "hp", "mountPath": "/hugepages"}],
        init_containers=[{"name": "prep", "image": "busybox"}],
    )
    launcher = pod(job(build_mpi_runtime(cfg), "launcher"))
    assert "hp" not in json.dumps(launcher) and "prep" not in json.dumps(launcher)


def test_mpi_launcher_has_fixed_resources_and_no_gpu_whatever_spec_resources_say() -> None:
    launcher = pod(job(build_mpi_runtime(USER), "launcher"))["containers"][0]
    assert launcher["resources"] == {"limits": {"cpu": "2", "memory": "1Gi"}}


def test_mpi_launcher_mounts_the_config_volume_read_only() -> None:
    launcher = pod(job(build_mpi_runtime(USER), "launcher"))
    assert {"name": "config-volume", "configMap": {"name": "run-config"}} in launcher["volumes"]
    mounts = launcher["containers"][0]["volumeMounts"]
    assert {"name": "config-volume", "mountPath": "/config", "readOnly": True} in mounts


def test_mpi_without_gang_scheduler_launcher_depends_on_ready_workers() -> None:
    rt = build_mpi_runtime(USER)
    assert job(rt, "launcher")["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert "startupPolicy" not in rt["spec"]["template"]["spec"]
    assert "schedulerName" not in json.dumps(rt)
    assert "metadata" not in job(rt, "node")["template"]


def test_mpi_with_gang_scheduler_labels_worker_and_launcher() -> None:
    cfg = RuntimeConfig(entry_name="n", image="i", gang_scheduler_name="kai-scheduler")
    worker, launcher = jobs(build_mpi_runtime(cfg))
    for j in (worker, launcher):
        assert pod(j)["schedulerName"] == "kai-scheduler"
        assert j["template"]["metadata"]["labels"]["kai.scheduler/queue"] == "default-queue"
        pod_labels = j["template"]["spec"]["template"]["metadata"]["labels"]
        assert pod_labels["kai.scheduler/queue"] == "default-queue"


def test_mpi_under_kai_waits_inside_the_launcher_instead_of_depends_on() -> None:
    cfg = RuntimeConfig(entry_name="n", image="i", gang_scheduler_name="kai-scheduler")
    rt = build_mpi_runtime(cfg)
    launcher = job(rt, "launcher")
    assert "dependsOn" not in launcher
    assert "startupPolicy" not in rt["spec"]["template"]["spec"]
    (init,) = pod(launcher)["initContainers"]
    assert "/etc/mpi/hostfile" in init["args"][0]
    assert {"name": "mpi-hostfile", "mountPath": "/etc/mpi", "readOnly": True} in init[
        "volumeMounts"
    ]


def test_mpi_under_runai_keeps_depends_on_and_has_no_startup_policy() -> None:
    cfg = RuntimeConfig(
        entry_name="n",
        image="i",
        gang_scheduler_name="runai-scheduler",
        gang_scheduler_queue_label_key="runai/queue",
    )
    rt = build_mpi_runtime(cfg)
    assert job(rt, "launcher")["dependsOn"] == [{"name": "node", "status": "Ready"}]
    assert "startupPolicy" not in rt["spec"]["template"]["spec"]


def test_wait_for_workers_script_loops_240_times_5s_apart_and_skips_its_own_host() -> None:
    from glimmer.certify.platform.scripts import LAUNCHER_WAIT_SCRIPT as s

    assert "-lt 240" in s and "sleep 5" in s
    assert '"$SELF"|"$SELF".*) continue' in s
    assert "BatchMode=yes" in s and "ConnectTimeout=5" in s and "timeout 10 ssh -n" in s
    assert "port 22" in s and "exit 1" in s
