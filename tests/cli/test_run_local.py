"""``glimmer run --backend local``: this host judged through the one engine by real runner
processes, its state under ``--state-dir``; the same command again replaces a finished run."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
import yaml

from glimmer.api.run import BurnInRun
from glimmer.cli.app import main
from glimmer.contract.vocab import Phase


def _disk_profile(tmp_path: Path, image: str | None = None) -> Path:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    docs = [
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInTest",
            "metadata": {"name": "disk"},
            "spec": {
                "kind": "disk-io",
                "durationSeconds": 30,
                "runner": {
                    # disk-io has no default image, and a process on this host needs none
                    **({"image": image} if image else {}),
                    "env": [
                        {"name": "DISK_IO_PATH", "value": str(scratch)},
                        {"name": "DISK_IO_SIZE_MB", "value": "8"},
                        {"name": "DISK_IO_MIN_FREE_MB", "value": "16"},
                    ],
                },
                "thresholds": [
                    {
                        "metric": "writeBandwidthMBs",
                        "comparison": "GreaterThanOrEqual",
                        "value": "1",
                    }
                ],
            },
        },
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": "disk-only"},
            "spec": {"tests": [{"testRef": "disk"}]},
        },
    ]
    path = tmp_path / "disk.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    return path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["run", "--backend", "local", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_local_run_judges_this_host_with_a_real_runner_and_keeps_its_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    args = ("-f", str(_disk_profile(tmp_path)), "--node", "here", "--state-dir", str(state))
    code, out, _ = _run(capsys, *args, "-o", "json")
    final = BurnInRun.model_validate(json.loads(out))
    assert final.name == "disk-only-here" and final.status is not None
    [result] = final.status.results or []
    assert code == {Phase.PASSED: 0, Phase.FAILED: 1}.get(final.status.phase, 3)
    if result.phase is Phase.PASSED:  # O_DIRECT works here: the figure is this disk's
        assert float((result.metrics or {})["writeBandwidthMBs"]) > 0
    assert (state / "runs" / "default" / "disk-only-here.json").is_file()
    code, out, _ = _run(capsys, *args)
    assert "(started (the finished run of that name replaced))" in out.replace("\n", " ")
    kept = BurnInRun.model_validate_json(
        (state / "runs" / "default" / "disk-only-here.json").read_text()
    )
    assert kept.metadata.uid != final.metadata.uid  # a new run, not the old one again


def test_a_dry_local_run_shows_the_plan_on_this_host_and_starts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    code, out, _ = _run(
        capsys, "-f", str(_disk_profile(tmp_path)), "--node", "here", "--state-dir", str(state),
        "--dry-run",
    )  # fmt: skip
    assert code == 0 and "Targets (1): here" in out and "disk-io" in out
    assert not (state / "runs").exists() and not (state / "executions").exists()


@pytest.mark.parametrize(
    "flag", [["--fault", "nic_degraded@nic:x/eth0"], ["--pairs", "ring"], ["--nodes", "a,b"]]
)
def test_a_simulator_only_flag_is_bad_input_with_the_local_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: list[str]
) -> None:
    code, _, err = _run(capsys, "--state-dir", str(tmp_path / "s"), *flag)
    assert code == 2 and err.startswith(f"error: {flag[0]}: shapes the simulated fleet")
    assert not (tmp_path / "s").exists()


def test_the_built_in_host_profile_judges_this_machine_with_real_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(capsys, "--state-dir", str(tmp_path / "state"), "-o", "json")
    final = BurnInRun.model_validate(json.loads(out))
    assert final.status is not None and final.spec.profile_ref == "host"
    results = {r.name: r for r in final.status.results or []}
    assert code == 0 and final.status.phase is Phase.PASSED, {
        n: (r.phase, r.message) for n, r in results.items()
    }
    memory = results["host-memory"].metrics or {}
    disk = results["host-disk"].metrics or {}
    assert float(memory["writeBandwidthMBs"]) >= 1000  # stressapptest on this machine's RAM
    assert float(disk["writeBandwidthMBs"]) >= 100 and float(disk["readBandwidthMBs"]) >= 100
    assert (results["host-kernel-and-links"].metrics or {})["xidEvents"] == "0"


XID = "6,1234,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."


def test_an_xid_in_the_kernel_log_during_the_window_fails_the_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kmsg = tmp_path / "kmsg"
    kmsg.write_text("6,1,1000,-;kernel: a quiet line\n")
    docs = [
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInTest",
            "metadata": {"name": "kernel"},
            "spec": {
                "kind": "host-health",
                "durationSeconds": 4,
                "runner": {"env": [{"name": "BURNIN_KMSG_PATH", "value": str(kmsg)}]},
                "thresholds": [
                    # The gate of the built-in host profile.
                    {"metric": "xidEvents", "comparison": "Equal", "value": "0"}
                ],
            },
        },
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInProfile",
            "metadata": {"name": "kernel-only"},
            "spec": {"tests": [{"testRef": "kernel"}]},
        },
    ]
    path = tmp_path / "kernel.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    done = threading.Event()

    def log_xids() -> None:  # the fault, made real: the driver logs an Xid while it is watched
        while not done.wait(0.3):
            with kmsg.open("a") as f:
                f.write(XID + "\n")

    writer = threading.Thread(target=log_xids, daemon=True)
    writer.start()
    try:
        code, out, _ = _run(
            capsys, "-f", str(path), "--state-dir", str(tmp_path / "s"), "-o", "json"
        )
    finally:
        done.set()
        writer.join()
    final = BurnInRun.model_validate(json.loads(out))
    assert final.status is not None
    [result] = final.status.results or []
    assert code == 1 and final.status.phase is Phase.FAILED and result.phase is Phase.FAILED
    assert int((result.metrics or {})["xidEvents"]) >= 1


def test_an_unknown_runtime_is_bad_input_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    code, _, err = _run(
        capsys, "-f", str(_disk_profile(tmp_path)), "--state-dir", str(state), "--runtime", "lxc"
    )
    assert code == 2 and err.startswith("error: --runtime lxc: not a runtime (one of process")
    assert not state.exists()


def test_the_runtime_flag_is_refused_on_the_simulator(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "--runtime", "docker"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --runtime: only with --backend local")


def test_a_container_runtime_without_its_engine_errors_the_attempt_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # This machine has the docker client and no engine: the attempt is an Error naming docker
    # (the hardware was not measured), never a Fail.
    state = tmp_path / "state"
    code, out, _ = _run(
        capsys, "-f", str(_disk_profile(tmp_path, "example.org/runner:1")), "--node", "here",
        "--state-dir", str(state), "--runtime", "docker", "-o", "json",
    )  # fmt: skip
    final = BurnInRun.model_validate(json.loads(out))
    assert final.status is not None and final.status.phase is Phase.ERROR and code == 3
    [result] = final.status.results or []
    assert result.phase is Phase.ERROR and "docker" in (result.message or "")
