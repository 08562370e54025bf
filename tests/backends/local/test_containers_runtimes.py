"""Which runtime runs this host's executions (backends/local/runtimes.py): ``auto`` takes the
first runtime on PATH whose engine answers ``info``, else processes; an explicit runtime that
is missing or does not answer is unavailable, with what it said, and is asked again. The
runtimes here are fake programs in tmp_path that only answer ``info``."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.backends.local.backend import LocalBackend
from glimmer.backends.local.containers import ContainerRuntime
from glimmer.backends.local.runtimes import RuntimeChoice, Unavailable, resolve

NO_DAEMON = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock."


def _fake(bin_dir: Path, name: str, *, answers: bool, calls: Path | None = None) -> Path:
    """A program ``name`` that answers ``info`` (exit 0) or fails it as a client without its
    engine does; each call appended to ``calls``."""
    bin_dir.mkdir(exist_ok=True)
    program = bin_dir / name
    record = f'echo "$@" >> {calls}\n' if calls else ""
    fails = f'echo "{NO_DAEMON}" >&2\nexit 1\n'
    program.write_text(f"#!/bin/sh\n{record}" + ("exit 0\n" if answers else fails))
    program.chmod(0o755)
    return program


def test_auto_takes_the_first_runtime_whose_engine_answers(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "docker", answers=False)
    podman = _fake(bin_dir, "podman", answers=True)
    _fake(bin_dir, "nerdctl", answers=True)
    assert resolve("auto", str(bin_dir)) == ContainerRuntime("podman", str(podman))


def test_auto_prefers_docker_when_its_engine_answers(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    docker = _fake(bin_dir, "docker", answers=True)
    _fake(bin_dir, "podman", answers=True)
    assert resolve("auto", str(bin_dir)) == ContainerRuntime("docker", str(docker))


def test_auto_with_only_a_client_whose_engine_is_down_runs_processes(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "docker", answers=False)
    assert resolve("auto", str(bin_dir)) is None
    (tmp_path / "empty").mkdir()
    assert resolve("auto", str(tmp_path / "empty")) is None


def test_an_explicit_runtime_whose_engine_is_down_is_unavailable_with_its_stderr(
    tmp_path: Path,
) -> None:
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "docker", answers=False)
    found = resolve("docker", str(bin_dir))
    assert isinstance(found, Unavailable) and found.runtime == "docker"
    assert "container runtime docker" in found.message
    assert "`docker info` exited 1" in found.message and NO_DAEMON in found.message


def test_an_explicit_runtime_missing_from_path_is_unavailable_naming_it(tmp_path: Path) -> None:
    found = resolve("nerdctl", str(tmp_path))
    assert isinstance(found, Unavailable)
    assert found.message == "container runtime nerdctl: no nerdctl program on PATH"


def test_an_engine_that_never_answers_is_unavailable_after_the_timeout(tmp_path: Path) -> None:
    hangs = tmp_path / "bin" / "podman"
    hangs.parent.mkdir()
    hangs.write_text("#!/bin/sh\nexec sleep 30\n")
    hangs.chmod(0o755)
    found = resolve("podman", str(hangs.parent), timeout=0.2)
    assert isinstance(found, Unavailable) and "gave no answer within 0.2s" in found.message


def test_an_unavailable_explicit_runtime_is_asked_again_and_one_that_answered_is_not(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls"
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "docker", answers=False, calls=calls)
    choice = RuntimeChoice("docker", str(bin_dir))
    assert isinstance(choice.current(), Unavailable)
    assert isinstance(choice.current(), Unavailable)
    assert calls.read_text().splitlines() == ["info", "info"]
    _fake(bin_dir, "docker", answers=True, calls=calls)  # the engine came up
    assert isinstance(choice.current(), ContainerRuntime)
    assert isinstance(choice.current(), ContainerRuntime)
    assert calls.read_text().splitlines() == ["info"] * 3


def test_auto_decides_once_so_one_run_never_mixes_processes_and_containers(
    tmp_path: Path,
) -> None:
    calls = tmp_path / "calls"
    bin_dir = tmp_path / "bin"
    _fake(bin_dir, "docker", answers=False, calls=calls)
    choice = RuntimeChoice("auto", str(bin_dir))
    assert choice.current() is None
    _fake(bin_dir, "docker", answers=True, calls=calls)
    assert choice.current() is None
    assert calls.read_text().splitlines() == ["info"]


def test_process_asks_no_runtime_anything(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    _fake(tmp_path / "bin", "docker", answers=True, calls=calls)
    assert RuntimeChoice("process", str(tmp_path / "bin")).current() is None
    assert not calls.exists()


def test_a_runtime_choice_outside_the_list_is_refused_by_the_backend(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="lxc"):
        LocalBackend(tmp_path, runtime="lxc")
