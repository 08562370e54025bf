"""A runner container as a local process (k8s_standin.processes): what runs, with what."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from glimmer.contract.images import CUDA, RUNNER
from tools.k8s_standin.processes import (
    CANNOT_RUN_IMAGE,
    CONFIG_ERROR,
    CannotRun,
    Launch,
    Process,
    argv_of,
    container_env,
    expand,
    launch_of,
    runner_kind,
)


def _pod(container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p1", "namespace": "burn", "uid": "u-1", "labels": {"a": "b"}},
        "spec": {"nodeName": "node-2", "containers": [container], **spec},
    }


def test_the_kind_is_read_from_a_glimmer_runner_images_tag_under_any_registry() -> None:
    assert runner_kind(RUNNER.reference("host-health")) == "host-health"
    assert runner_kind(RUNNER.reference("fingerprint-probe")) == "fingerprint-probe"
    assert runner_kind(CUDA.reference("gemm-sweep")) == "gemm-sweep"
    assert runner_kind("mirror.site:5000/ml/glimmer-runner:0.1.0-disk-io") == "disk-io"
    assert runner_kind("busybox:1.36") is None
    assert runner_kind("ghcr.io/glimmer-ai/glimmer-runner") is None
    assert runner_kind("ghcr.io/glimmer-ai/glimmer-runner@sha256:abc") is None


def test_a_runner_image_without_a_command_runs_its_entrypoint_with_this_python() -> None:
    container = {"name": "runner", "image": RUNNER.reference("memory-stress"), "args": ["-v"]}
    assert argv_of(container, {}) == (
        sys.executable,
        "-m",
        "glimmer.runners.cli",
        "memory-stress",
        "-v",
    )


def test_any_other_image_without_a_command_cannot_run() -> None:
    with pytest.raises(CannotRun) as caught:
        argv_of({"name": "runner", "image": "busybox:1.36"}, {})
    assert caught.value.reason == CANNOT_RUN_IMAGE
    assert "busybox:1.36" in caught.value.message


def test_a_command_replaces_the_entrypoint_and_variables_expand_in_it() -> None:
    container = {
        "name": "runner",
        "image": "busybox",
        "command": ["echo", "$(WHO)"],
        "args": ["$(NOPE)", "$$(WHO)"],
    }
    assert argv_of(container, {"WHO": "me"}) == ("echo", "me", "$(NOPE)", "$(WHO)")


def test_expansion_sees_only_variables_defined_before() -> None:
    assert expand("a$(X)b$$", {"X": "1"}) == "a1b$"


def test_field_refs_give_the_pods_own_names_and_address() -> None:
    def ref(path: str) -> dict[str, Any]:
        return {"fieldRef": {"fieldPath": path}}

    env = [
        {"name": "NODE", "valueFrom": ref("spec.nodeName")},
        {"name": "POD", "valueFrom": ref("metadata.name")},
        {"name": "NS", "valueFrom": ref("metadata.namespace")},
        {"name": "IP", "valueFrom": ref("status.podIP")},
        {"name": "LABEL", "valueFrom": ref("metadata.labels['a']")},
        {"name": "BOTH", "value": "$(POD)@$(NODE)"},
        {"name": "POD", "value": "later-wins"},
    ]
    got = container_env(
        _pod({"name": "runner", "env": env}), {"name": "runner", "env": env}, "10.201.0.3"
    )
    assert got == {
        "NODE": "node-2",
        "POD": "later-wins",
        "NS": "burn",
        "IP": "10.201.0.3",
        "LABEL": "b",
        "BOTH": "p1@node-2",
    }


def test_a_secret_ref_is_a_config_error_not_an_empty_variable() -> None:
    env = [{"name": "T", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]
    with pytest.raises(CannotRun) as caught:
        container_env(_pod({}), {"name": "runner", "env": env}, "")
    assert caught.value.reason == CONFIG_ERROR


def test_a_host_path_is_used_where_it_is_and_refused_elsewhere(tmp_path: Path) -> None:
    mount = {"name": "host-0-data", "mountPath": str(tmp_path)}
    volume = {"name": "host-0-data", "hostPath": {"path": str(tmp_path), "type": "Directory"}}
    container = {"name": "runner", "command": ["true"], "volumeMounts": [mount]}
    launch = launch_of(_pod(container, volumes=[volume]), container, "", tmp_path / "scratch")
    assert launch.argv == ("true",)
    assert launch.cwd == tmp_path / "scratch"
    moved = {**mount, "mountPath": "/elsewhere"}
    container["volumeMounts"] = [moved]
    with pytest.raises(CannotRun, match="mounted at /elsewhere"):
        launch_of(_pod(container, volumes=[volume]), container, "", tmp_path)
    container["volumeMounts"] = [mount]
    missing = {"name": "host-0-data", "hostPath": {"path": str(tmp_path / "no"), "type": "File"}}
    mount["mountPath"] = str(tmp_path / "no")
    with pytest.raises(CannotRun, match=r"MountVolume\.SetUp failed"):
        launch_of(_pod(container, volumes=[missing]), container, "", tmp_path)


def test_python3_on_a_pods_path_is_the_stand_ins_interpreter(tmp_path: Path) -> None:
    container = {
        "name": "runner",
        "command": ["python3", "-c", "print(1)"],
        "workingDir": str(tmp_path / "wd"),
    }
    launch = launch_of(_pod(container), container, "", tmp_path)
    assert launch.env["PATH"].split(":")[0] == str(Path(sys.executable).parent)
    assert launch.cwd == tmp_path / "wd"
    assert launch.env["HOSTNAME"] == "p1"


async def test_a_process_logs_stdout_and_stderr_and_reports_its_exit_code(tmp_path: Path) -> None:
    script = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    launch = Launch((sys.executable, "-c", script), {"PATH": "/usr/bin:/bin"}, tmp_path)
    proc = await Process.start(launch, [], tmp_path / "burn" / "p1.log")
    assert await proc.wait() == 3
    assert sorted((tmp_path / "burn" / "p1.log").read_text().split()) == ["err", "out"]


async def test_stop_sends_sigterm_then_sigkill_after_the_grace_period(tmp_path: Path) -> None:
    stubborn = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print('up', flush=True); time.sleep(60)"
    )
    launch = Launch((sys.executable, "-c", stubborn), {}, tmp_path)
    proc = await Process.start(launch, [], tmp_path / "p.log")
    while "up" not in (tmp_path / "p.log").read_text():
        await asyncio.sleep(0.02)
    assert await proc.stop(0.2) == 137  # SIGKILL, as a runtime reports it
    polite = Launch(("sleep", "60"), {"PATH": "/usr/bin:/bin"}, tmp_path)
    proc = await Process.start(polite, [], tmp_path / "q.log")
    assert await proc.stop(5) == 143  # SIGTERM was enough
