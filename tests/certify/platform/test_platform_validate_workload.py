"""ValidateWorkloadVolumes and ValidateWorkloadInitContainers."""

from __future__ import annotations

import pytest

from glimmer.certify.platform import (
    PlatformError,
    validate_workload_init_containers,
    validate_workload_volumes,
)


def _mount(path: str, name: str = "data") -> list[dict[str, str]]:
    return [{"name": name, "mountPath": path}]


def _vol(name: str) -> list[dict[str, object]]:
    return [{"name": name, "emptyDir": {}}]


def test_mpi_refuses_the_mpi_ssh_auth_volume_name() -> None:
    with pytest.raises(PlatformError, match=r'spec.volumes\[0\].name: "mpi-ssh-auth"'):
        validate_workload_volumes(_vol("mpi-ssh-auth"), [], "mpi", False)


@pytest.mark.parametrize("framework", ["torch", "exec"])
def test_torch_and_exec_refuse_the_trainer_token_volume_name(framework: str) -> None:
    with pytest.raises(PlatformError, match="kubeflow-trainer-token"):
        validate_workload_volumes(_vol("kubeflow-trainer-token"), [], framework, False)


def test_mpi_allows_the_trainer_token_name_it_lands_on_the_launcher() -> None:
    validate_workload_volumes(_vol("kubeflow-trainer-token"), [], "mpi", False)


@pytest.mark.parametrize("framework", ["torch", "exec"])
def test_mpi_only_names_and_paths_are_checked_on_mpi_alone(framework: str) -> None:
    validate_workload_volumes(_vol("mpi-ssh-auth"), _mount("/root/.ssh"), framework, False)
    validate_workload_volumes([], _mount("/tmp/mpi-ssh-raw/x"), framework, False)


@pytest.mark.parametrize("framework", ["torch", "mpi", "exec"])
def test_every_framework_refuses_the_dshm_volume_and_a_mount_at_dev_shm(framework: str) -> None:
    with pytest.raises(PlatformError, match='"dshm"'):
        validate_workload_volumes(_vol("dshm"), [], framework, False)
    with pytest.raises(PlatformError, match='"/dev/shm"'):
        validate_workload_volumes([], _mount("/dev/shm"), framework, False)


@pytest.mark.parametrize(
    "path",
    ["/tmp/mpi-ssh-raw", "/tmp/mpi-ssh-raw/id_rsa", "/root/.ssh", "/root/.ssh/authorized_keys"],
)
def test_mpi_reserves_the_ssh_directories_and_every_path_below_them(path: str) -> None:
    with pytest.raises(PlatformError, match="and below"):
        validate_workload_volumes([], _mount(path), "mpi", False)


@pytest.mark.parametrize("framework", ["torch", "exec"])
def test_torch_and_exec_reserve_the_trainer_token_directory_and_below(framework: str) -> None:
    for path in ("/var/run/secrets/kubeflow/trainer", "/var/run/secrets/kubeflow/trainer/token"):
        with pytest.raises(PlatformError, match="and below"):
            validate_workload_volumes([], _mount(path), framework, False)
    validate_workload_volumes([], _mount("/var/run/secrets/kubeflow/trainer"), "mpi", False)


def test_dev_shm_and_config_are_reserved_exactly_so_mounts_below_them_pass() -> None:
    validate_workload_volumes([], _mount("/dev/shm/sub"), "torch", True)
    validate_workload_volumes([], _mount("/config/sub"), "torch", True)


def test_a_relative_mount_path_is_refused_outright() -> None:
    with pytest.raises(PlatformError, match="not an absolute path"):
        validate_workload_volumes([], _mount("data/dir"), "torch", False)


def test_config_path_is_taken_only_when_spec_config_is_set() -> None:
    validate_workload_volumes([], _mount("/config"), "torch", False)
    with pytest.raises(PlatformError, match='"/config"'):
        validate_workload_volumes([], _mount("/config"), "torch", True)


def test_a_mount_may_name_config_volume_only_when_spec_config_is_set() -> None:
    with pytest.raises(PlatformError, match=r"only when spec\.config is set"):
        validate_workload_volumes([], _mount("/etc/app", "config-volume"), "torch", False)
    validate_workload_volumes([], _mount("/etc/app", "config-volume"), "torch", True)


@pytest.mark.parametrize("has_config", [False, True])
def test_the_config_volume_name_is_reserved_either_way(has_config: bool) -> None:
    with pytest.raises(PlatformError, match="config-volume"):
        validate_workload_volumes(_vol("config-volume"), [], "mpi", has_config)


def test_init_container_taking_the_workload_containers_name_is_refused() -> None:
    with pytest.raises(PlatformError, match=r'spec.initContainers\[1\].name: "node"'):
        validate_workload_init_containers([{"name": "prep"}, {"name": "node"}])


def test_fix_ssh_permissions_is_not_reserved_user_inits_never_reach_the_launcher() -> None:
    validate_workload_init_containers([{"name": "fix-ssh-permissions"}])


def test_errors_carry_the_field_path_in_their_location_not_their_message() -> None:
    with pytest.raises(PlatformError) as e:
        validate_workload_volumes(_vol("a") + _vol("dshm"), [], "torch", False)
    assert e.value.location.field == "spec.volumes[1].name"
    assert e.value.message == '"dshm" is reserved on torch'
    with pytest.raises(PlatformError) as e:
        validate_workload_init_containers([{"name": "x"}, {"name": "node"}])
    assert e.value.location.field == "spec.initContainers[1].name"
