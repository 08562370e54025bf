"""The container command line of an execution (backends/local/containers.py, §8.2): golden
argv for representative specs, the GPU flags per runtime, devices from mounts (a fixture device
scan), host networking for Pair and Group, the container's name, and this host's device scan."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from glimmer.api.test import BurnInTestSpec
from glimmer.backends.local.containers import (
    ContainerRuntime,
    char_devices,
    container_name,
)
from glimmer.engine.backend import ExecutionSpec, Mount, Privileges, Resources

DOCKER = ContainerRuntime("docker", "docker")
PODMAN = ContainerRuntime("podman", "podman")
NERDCTL = ContainerRuntime("nerdctl", "nerdctl")
IMAGE = "ghcr.io/glimmer/runner:test"

# A fixture tree of devices, in place of this host's /dev.
DEVICES = {
    "/dev/infiniband": ["/dev/infiniband/rdma_cm", "/dev/infiniband/uverbs0"],
    "/dev/kmsg": ["/dev/kmsg"],
    "/dev/kfd": ["/dev/kfd"],
}


def scan(host_path: str) -> list[str]:
    return DEVICES.get(host_path, [])


def _spec(**changes: object) -> ExecutionSpec:
    spec = ExecutionSpec(
        name="run-t0-a1-0badcafe",
        namespace="default",
        run="run",
        run_uid="uid",
        test="t",
        test_index=0,
        kind="gpu-burn",
        scope="Node",
        node="host-000",
        unit_nodes=("host-000",),
        attempt=1,
        role="",
        rank=None,
        nranks=None,
        image=IMAGE,
        env=(("BURNIN_DURATION_SECONDS", "60"), ("BURNIN_ATTEMPT", "1")),
        duration_seconds=60,
        deadline_seconds=180,
        labels={},
        test_spec=BurnInTestSpec.model_validate({"kind": "gpu-burn"}),
    )
    return dataclasses.replace(spec, **changes)  # type: ignore[arg-type]


NAME = "glimmer-default-run-t0-a1-0badcafe"
HEAD = ["docker", "run", "--rm", "--name", NAME]
ENV = ["-e", "BURNIN_ATTEMPT=1", "-e", "BURNIN_DURATION_SECONDS=60"]


def test_a_node_test_with_host_paths_gets_volumes_devices_memlock_and_its_entrypoint() -> None:
    spec = _spec(
        mounts=(
            Mount("/dev/infiniband", "/dev/infiniband", False, "Directory"),
            Mount("/sys", "/host/sys"),
            Mount("/dev/kmsg", "/dev/kmsg", True, "CharDevice"),
        ),
        privileges=Privileges(privileged=True, run_as_user=0),
        env=(("ZED", "last"), ("BURNIN_ATTEMPT", "1"), ("ALPHA", "first")),
        command=("/usr/bin/probe", "--fast"),
        args=("-v", "--json"),
    )
    assert DOCKER.run_argv(spec, scan) == [
        *HEAD,
        "--privileged",
        "--user",
        "0",
        "--ulimit",
        "memlock=-1:-1",
        "-v",
        "/dev/infiniband:/dev/infiniband",
        "-v",
        "/sys:/host/sys:ro",
        "-v",
        "/dev/kmsg:/dev/kmsg:ro",
        "--device",
        "/dev/infiniband/rdma_cm",
        "--device",
        "/dev/infiniband/uverbs0",
        "--device",
        "/dev/kmsg",
        "-e",
        "ALPHA=first",
        "-e",
        "BURNIN_ATTEMPT=1",
        "-e",
        "ZED=last",
        "--entrypoint",
        "/usr/bin/probe",
        IMAGE,
        "--fast",
        "-v",
        "--json",
    ]


def test_an_nvidia_gpu_test_is_gpus_all_under_docker_and_the_cdi_device_under_podman() -> None:
    spec = _spec(resources=Resources((("nvidia.com/gpu", "8"),), (("nvidia.com/gpu", "8"),)))
    assert DOCKER.run_argv(spec, scan) == [*HEAD, "--gpus", "all", *ENV, IMAGE]
    for runtime in (PODMAN, NERDCTL):
        assert runtime.run_argv(spec, scan) == [
            runtime.name,
            "run",
            "--rm",
            "--name",
            NAME,
            "--device",
            "nvidia.com/gpu=all",
            *ENV,
            IMAGE,
        ]


def test_a_mig_slice_asks_for_every_gpu_as_a_whole_gpu_does() -> None:
    spec = _spec(resources=Resources((("nvidia.com/mig-1g.10gb", "1"), ("memory", "16Gi"))))
    assert DOCKER.run_argv(spec, scan) == [*HEAD, "--gpus", "all", *ENV, IMAGE]


def test_an_amd_gpu_test_gets_kfd_and_dri_and_a_device_given_twice_is_passed_once() -> None:
    spec = _spec(
        resources=Resources((("amd.com/gpu", "1"),)),
        mounts=(Mount("/dev/kfd", "/dev/kfd", False, "CharDevice"),),
    )
    for runtime in (DOCKER, PODMAN):
        argv = runtime.run_argv(spec, scan)
        assert argv[5:11] == [
            "--device",
            "/dev/kfd",
            "--device",
            "/dev/dri",
            "-v",
            "/dev/kfd:/dev/kfd",
        ]
        assert argv.count("/dev/kfd") == 1 and argv[11:] == [*ENV, IMAGE]


def test_gpu_flags_follow_the_limits_first_then_the_requests() -> None:
    spec = _spec(resources=Resources((("amd.com/gpu", "1"),), (("nvidia.com/gpu", "1"),)))
    assert DOCKER.run_argv(spec, scan)[5:11] == [
        "--device",
        "/dev/kfd",
        "--device",
        "/dev/dri",
        "--gpus",
        "all",
    ]


@pytest.mark.parametrize("scope", ["Pair", "Group"])
def test_a_pair_or_group_test_always_runs_on_the_host_network(scope: str) -> None:
    spec = _spec(scope=scope, role="server", args=("--port", "5201"))
    assert DOCKER.run_argv(spec, scan) == [
        *HEAD,
        "--network",
        "host",
        *ENV,
        IMAGE,
        "--port",
        "5201",
    ]


def test_a_node_test_is_on_the_host_network_only_when_it_asks() -> None:
    assert "--network" not in DOCKER.run_argv(_spec(), scan)
    asked = _spec(privileges=Privileges(host_network=True))
    assert DOCKER.run_argv(asked, scan)[5:7] == ["--network", "host"]


def test_without_a_command_the_image_runs_its_own_entrypoint_with_the_args() -> None:
    argv = DOCKER.run_argv(_spec(args=("--level", "2")), scan)
    assert "--entrypoint" not in argv and argv[-3:] == [IMAGE, "--level", "2"]


def test_devices_of_a_directory_mounted_elsewhere_appear_where_the_mount_puts_them() -> None:
    spec = _spec(mounts=(Mount("/dev/infiniband", "/dev/ib"),))
    assert DOCKER.run_argv(spec, scan)[5:] == [
        "--ulimit",
        "memlock=-1:-1",
        "-v",
        "/dev/infiniband:/dev/ib:ro",
        "--device",
        "/dev/infiniband/rdma_cm:/dev/ib/rdma_cm",
        "--device",
        "/dev/infiniband/uverbs0:/dev/ib/uverbs0",
        *ENV,
        IMAGE,
    ]


def test_the_container_name_is_the_executions_own_and_differs_per_attempt() -> None:
    assert container_name(_spec()) == NAME
    assert container_name(_spec()) == container_name(_spec())
    assert container_name(_spec(name="run-t0-a2-12345678")) != NAME
    odd = container_name(_spec(namespace="", name="a b/c"))
    assert odd == "glimmer-default-a-b-c"


def test_an_unknown_runtime_name_is_refused() -> None:
    with pytest.raises(ValueError, match="lxc"):
        ContainerRuntime("lxc", "/usr/bin/lxc")


def test_this_hosts_scan_finds_character_devices_and_skips_symlinks_and_folders(
    tmp_path: Path,
) -> None:
    found = char_devices("/dev")
    assert "/dev/null" in found
    assert not any(os.path.islink(p) or os.path.isdir(p) for p in found)
    assert char_devices("/dev/null") == ["/dev/null"]
    (tmp_path / "regular").write_text("")
    (tmp_path / "link").symlink_to("/dev/null")
    (tmp_path / "folder").mkdir()
    assert char_devices(str(tmp_path)) == []
    assert char_devices(str(tmp_path / "regular")) == []
    assert char_devices(str(tmp_path / "missing")) == []
