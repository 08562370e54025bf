"""host-health run for real: on this machine's /proc, /sys and /dev/kmsg, and against fixture
trees (kernel logs with Xid lines, AER counters, NICs, an InfiniBand port, a stand-in NVML) for
what this machine cannot show."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from real_runner import FIXTURES, Ran, argv_of, assert_contract, finish, run_runner, runner_env

from glimmer.runners import host_health
from glimmer.runners.program import run

XID_LINE = "6,1234,5000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
MCE_LINE = "3,1235,5000001,-;mce: [Hardware Error]: Machine check events logged"
QUIET_LINE = "6,1236,5000002,-;usb 1-1: new high-speed USB device number 2"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def nic(sysfs: Path, name: str, up: bool = True, carrier_down: int = 0) -> Path:
    iface = sysfs / "class" / "net" / name
    (iface / "device").mkdir(parents=True)  # a physical NIC has a device link
    _write(iface / "operstate", "up\n" if up else "down\n")
    _write(iface / "carrier_down_count", f"{carrier_down}\n")
    return iface


def quiet_host(tmp_path: Path) -> dict[str, str]:
    """A fixture host: one healthy NIC, an empty kernel log, no AER, no NVML."""
    sysfs = tmp_path / "sys"
    nic(sysfs, "eth0")
    _write(sysfs / "class" / "net" / "lo" / "operstate", "unknown\n")
    kmsg = _write(tmp_path / "kmsg", QUIET_LINE + "\n")
    return {
        "BURNIN_SYSFS_ROOT": str(sysfs),
        "BURNIN_KMSG_PATH": str(kmsg),
        "BURNIN_DURATION_SECONDS": "1",
    }


def run_during_window(env: dict[str, str], during: Callable[[], None]) -> Ran:
    """Start host-health, wait for its window breadcrumb, make something happen, finish."""
    proc = subprocess.Popen(
        argv_of("host-health"), env=runner_env(env), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.strip() == "host_health_stage=window":
            during()
            break
    rest, err = proc.communicate(timeout=60)
    return finish("host-health", "".join(seen) + rest, err, proc.returncode)


def test_this_host_is_judged_from_its_real_kernel_log_and_nics() -> None:
    ran = run_runner("host-health", {"BURNIN_DURATION_SECONDS": "1"})
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout
    m = ran.parsed.metrics
    assert m["xidSource"] == "kmsg"  # root on this machine: /dev/kmsg is readable
    assert m["xidEvents"] == "0"
    assert int(m["nicCount"]) >= 1
    assert m["nicLinkDownEvents"] == "0"
    assert m["observationWindowS"] == "1.0"
    assert m["nodeReady"] == "true"
    assert m["hostHealthStage"] == "done"
    assert m["nvmlStatus"] == "absent"  # nvidia-ml-py is not installed here: NVML omitted
    assert "eccErrors" not in m and "eccErrors" not in ran.parsed.unmeasurable
    assert ran.marker == "HOST_HEALTH_OK"


def test_breadcrumbs_are_printed_stage_by_stage_before_the_marker() -> None:
    ran = run_runner("host-health", {"BURNIN_DURATION_SECONDS": "1"})
    stages = [ln.split("=", 1)[1] for ln in ran.stdout.splitlines() if "host_health_stage=" in ln]
    assert stages == [
        "start", "nvml", "amdgpu-ras", "kernel-log", "pcie-aer", "nic", "window", "window-end",
        "done",
    ]  # fmt: skip


def test_an_xid_logged_during_the_window_fails_the_node(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    env["BURNIN_DURATION_SECONDS"] = "2"
    kmsg = Path(env["BURNIN_KMSG_PATH"])

    def xid() -> None:
        with kmsg.open("a") as f:
            f.write(XID_LINE + "\n" + MCE_LINE + "\n")

    ran = run_during_window(env, xid)
    assert_contract(ran)
    assert ran.exit_code == 1
    assert ran.parsed.metrics["xidEvents"] == "1"
    assert ran.parsed.metrics["kernelHwErrors"] == "1"
    assert ran.parsed.metrics["xidPreexisting"] == "0"
    assert ran.parsed.metrics["nodeReady"] == "false"
    assert ran.marker == "HOST_HEALTH_FAULT: xid_count=1"


def test_an_xid_already_in_the_log_is_preexisting_not_a_window_event(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    _write(Path(env["BURNIN_KMSG_PATH"]), f"{XID_LINE}\n{QUIET_LINE}\n")
    ran = run_runner("host-health", env)
    assert_contract(ran)
    assert ran.exit_code == 0
    assert ran.parsed.metrics["xidPreexisting"] == "1"
    assert ran.parsed.metrics["xidEvents"] == "0"


def test_a_log_rotated_during_the_window_is_dropped_not_counted_as_zero(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    env["BURNIN_DURATION_SECONDS"] = "2"
    kmsg = Path(env["BURNIN_KMSG_PATH"])
    kmsg.write_text(QUIET_LINE + "\n" + QUIET_LINE + "\n")

    def rotate() -> None:
        kmsg.write_text("")  # truncated under the reader: what was logged meanwhile is lost

    ran = run_during_window(env, rotate)
    assert_contract(ran)
    assert ran.parsed.metrics["xidLogDropped"] == "1"
    assert "xidEvents" not in ran.parsed.metrics
    assert ran.exit_code == 0  # nothing measured was bad; the xidEvents gate fails closed


def test_text_logs_stand_in_and_count_preexisting_xids_from_this_boot_only(
    tmp_path: Path,
) -> None:
    env = quiet_host(tmp_path)
    log = _write(
        tmp_path / "kern.log",
        "Nov 1 host kernel: NVRM: Xid (PCI:0000:3b:00): 48, old boot\n"
        "Nov 2 host kernel: Linux version 6.8.0 (builder@host)\n"
        "Nov 2 host kernel: NVRM: Xid (PCI:0000:3b:00): 13, this boot\n",
    )
    env["BURNIN_KMSG_PATH"] = str(tmp_path / "no-kmsg")
    env["BURNIN_KERN_LOG_PATHS"] = f"{tmp_path / 'missing.log'}:{log}"
    ran = run_runner("host-health", env)
    assert_contract(ran)
    assert ran.parsed.metrics["xidSource"] == "kernlog"
    assert ran.parsed.metrics["xidPreexisting"] == "1"
    assert ran.parsed.metrics["xidEvents"] == "0"


def test_without_a_kernel_log_the_xid_count_is_omitted_with_the_reason(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    env["BURNIN_KMSG_PATH"] = str(tmp_path / "no-kmsg")
    env["BURNIN_KERN_LOG_PATHS"] = str(tmp_path / "no-kern.log")
    ran = run_runner("host-health", env)
    assert_contract(ran)
    assert ran.exit_code == 0  # the NIC still answered; the Xid gate then fails closed
    assert ran.parsed.metrics["xidSource"] == "none"
    assert "no-kmsg" in ran.parsed.metrics["xidSourceDetail"]
    assert "xidEvents" not in ran.parsed.metrics
    assert "xidEvents" not in ran.parsed.unmeasurable


def test_aer_counters_and_a_pegged_infiniband_counter_are_reported(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    sysfs = Path(env["BURNIN_SYSFS_ROOT"])
    fn = sysfs / "bus" / "pci" / "devices" / "0000:3b:00.0"
    _write(fn / "aer_dev_fatal", "Undefined 0\nDLP 1\nTOTAL_ERR_FATAL 1\n")
    _write(fn / "aer_dev_nonfatal", "Undefined 0\nTOTAL_ERR_NONFATAL 0\n")
    _write(fn / "aer_dev_correctable", "RxErr 3\nBadTLP 2\n")  # no total line: summed
    port = sysfs / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    _write(port / "state", "4: ACTIVE\n")
    _write(port / "link_layer", "InfiniBand\n")
    _write(port / "counters" / "symbol_error", "65535\n")
    _write(port / "counters" / "link_downed", "0\n")
    ran = run_runner("host-health", env)
    assert_contract(ran)
    m = ran.parsed.metrics
    assert (m["aerStatus"], m["pcieAerFatal"], m["pcieAerNonfatal"]) == ("ok", "1", "0")
    assert m["pcieAerCorrectable"] == "5"
    assert (m["ibPorts"], m["ibPortsActive"]) == ("1", "1")
    assert m["fabricCounterStatus"] == "ok"
    assert m["fabricCountersSaturated"] == "1"
    assert m["fabricSaturatedCounters"] == "mlx5_0/1/symbol_error"
    assert ran.exit_code == 0  # evidence, not a runner gate: the profile decides


def test_a_nic_link_going_down_during_the_window_fails_the_node(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    env["BURNIN_DURATION_SECONDS"] = "2"
    iface = Path(env["BURNIN_SYSFS_ROOT"]) / "class" / "net" / "eth0"

    def flap() -> None:
        (iface / "carrier_down_count").write_text("1\n")

    ran = run_during_window(env, flap)
    assert_contract(ran)
    assert ran.exit_code == 1
    assert ran.parsed.metrics["nicLinkDownEvents"] == "1"
    assert ran.marker == "HOST_HEALTH_FAULT: nic_link_down=1"


def test_an_infiniband_link_down_counts_and_a_roce_ports_own_counter_does_not(
    tmp_path: Path,
) -> None:
    env = quiet_host(tmp_path)
    env["BURNIN_DURATION_SECONDS"] = "2"
    ports = {}
    for dev, layer in (("mlx5_0", "InfiniBand"), ("mlx5_1", "Ethernet")):
        port = Path(env["BURNIN_SYSFS_ROOT"]) / "class" / "infiniband" / dev / "ports" / "1"
        _write(port / "state", "4: ACTIVE\n")
        _write(port / "link_layer", layer + "\n")
        _write(port / "counters" / "link_downed", "0\n")
        ports[dev] = port

    def both_go_down() -> None:
        for port in ports.values():  # RoCE's netdev counts its own carrier: not twice
            (port / "counters" / "link_downed").write_text("1\n")

    ran = run_during_window(env, both_go_down)
    assert_contract(ran)
    assert ran.parsed.metrics["nicLinkDownEvents"] == "1"
    assert ran.exit_code == 1


def test_a_namespace_without_a_physical_nic_omits_nic_counts(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    sysfs = tmp_path / "netns-sys"
    _write(sysfs / "class" / "net" / "veth0" / "operstate", "up\n")  # virtual: no device link
    env["BURNIN_SYSFS_ROOT"] = str(sysfs)
    ran = run_runner("host-health", env)
    assert_contract(ran)
    m = ran.parsed.metrics
    assert m["nicStatus"] == "absent"
    # Real /proc: init's namespace may be unreadable even to root in a sandbox, and the
    # reason then says it could not tell; either way it names the network namespace.
    assert "network namespace" in m["nicAbsentReason"]
    assert "nicCount" not in m and "nicLinkDownEvents" not in m


def test_a_pod_namespace_is_named_as_the_reason_nic_counts_are_missing(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    (proc / "self" / "ns").mkdir(parents=True)
    (proc / "1" / "ns").mkdir(parents=True)
    os.symlink("net:[4026532001]", proc / "self" / "ns" / "net")
    os.symlink("net:[4026531840]", proc / "1" / "ns" / "net")
    reason = host_health.nic_absent_reason(proc)
    assert reason == "not the host network namespace (net:[4026532001]): run with host networking"
    assert "run with host networking" in host_health.nic_absent_reason(tmp_path / "no-proc")


def test_nothing_readable_is_an_error_not_a_pass(tmp_path: Path) -> None:
    ran = run_runner(
        "host-health",
        {
            "BURNIN_SYSFS_ROOT": str(tmp_path / "empty-sys"),
            "BURNIN_KMSG_PATH": str(tmp_path / "no-kmsg"),
            "BURNIN_KERN_LOG_PATHS": str(tmp_path / "no.log"),
            "BURNIN_DURATION_SECONDS": "1",
        },
    )
    assert_contract(ran)
    assert ran.exit_code == 3
    assert ran.marker.startswith("HOST_HEALTH_ERROR: nothing could be read")


def _with_fake_nvml(env: dict[str, str], **fake: str) -> dict[str, str]:
    env = dict(env, PYTHONPATH=str(FIXTURES / "host-health"))
    env.update({f"FAKE_NVML_{k.upper()}": v for k, v in fake.items()})
    return env


def test_nvml_on_a_part_without_ecc_declares_ecc_and_rows_unmeasurable(tmp_path: Path) -> None:
    ran = run_runner("host-health", _with_fake_nvml(quiet_host(tmp_path), shape="gb10"))
    assert_contract(ran)
    assert ran.exit_code == 0
    m = ran.parsed.metrics
    assert (m["nvmlStatus"], m["eccMode"], m["devicesVisible"]) == ("ok", "unsupported", "1")
    assert {"eccErrors", "remappedRows"} <= ran.parsed.unmeasurable
    assert m["gpuName"] == "NVIDIA GB10"
    assert "retiredPagesTotal" in ran.parsed.unmeasurable
    assert m["pcieReplayErrors"] == "0"


def test_nvml_uncorrected_ecc_and_pcie_replays_fail_the_node(tmp_path: Path) -> None:
    env = _with_fake_nvml(quiet_host(tmp_path), shape="hgx", dbe="2", replay_step="3")
    ran = run_runner("host-health", env)
    assert_contract(ran)
    assert ran.exit_code == 1
    m = ran.parsed.metrics
    assert (m["eccMode"], m["eccErrors"], m["eccSbeTotal"]) == ("enabled", "2", "7")
    assert m["remappedRows"] == "0"
    assert m["pcieReplayErrors"] == "3"
    assert ran.marker == "HOST_HEALTH_FAULT: ecc_errors=2 pcie_replay_count=3"


def test_nvml_retired_pages_are_summed_on_parts_that_retire_pages(tmp_path: Path) -> None:
    ran = run_runner("host-health", _with_fake_nvml(quiet_host(tmp_path), shape="v100"))
    assert_contract(ran)
    assert ran.parsed.metrics["retiredPagesTotal"] == "1"


def test_a_hung_nvml_probe_is_abandoned_and_nothing_more_is_asked(tmp_path: Path) -> None:
    asked = tmp_path / "asked"
    ran = run_runner("host-health", _with_fake_nvml(quiet_host(tmp_path), hang="1", log=str(asked)))
    assert_contract(ran)
    assert ran.exit_code == 0
    m = ran.parsed.metrics
    assert m["nvmlStatus"] == "ok"
    assert "eccMode" not in m and "gpuTempC" not in m  # omitted, not guessed
    assert "nvml: stopped asking after a probe hung (nvmlDeviceGetEccMode" in ran.stdout
    assert m["driverVersion"] == "580.82.09"  # asked before the hang
    assert not asked.exists()  # after it: nothing (eight hung probes would pass 55 s)


def amd_gpu(sysfs: Path, address: str, counters: dict[str, str]) -> None:
    fn = sysfs / "bus" / "pci" / "devices" / address
    _write(fn / "vendor", "0x1002\n")
    for name, text in counters.items():
        _write(fn / "ras" / f"{name}_err_count", text)


def test_amdgpu_ras_counters_gate_uncorrectable_errors(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    sysfs = Path(env["BURNIN_SYSFS_ROOT"])
    amd_gpu(sysfs, "0000:c1:00.0", {"umc": "ue: 1\nce: 4\n", "gfx": "ue: 0\nce: 2\n"})
    amd_gpu(sysfs, "0000:c2:00.0", {"umc": "ue: 0\nce: 0\n"})
    ran = run_runner("host-health", env)
    assert_contract(ran)
    m = ran.parsed.metrics
    assert (m["eccSource"], m["devicesVisible"], m["eccErrors"]) == ("amdgpu-sysfs", "2", "1")
    assert (m["eccDbeTotal"], m["eccSbeTotal"]) == ("1", "6")
    assert ran.exit_code == 1
    assert ran.marker == "HOST_HEALTH_FAULT: ecc_errors=1"


def test_an_unreadable_amdgpu_counter_is_named_and_the_total_omitted(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    amd_gpu(Path(env["BURNIN_SYSFS_ROOT"]), "0000:c1:00.0", {"umc": "ue: 0\nce: 0\n",
                                                              "sdma": "garbled\n"})  # fmt: skip
    ran = run_runner("host-health", env)
    assert_contract(ran)
    assert ran.parsed.metrics["amdRasUnreadableFiles"] == "0000:c1:00.0/sdma_err_count"
    assert "eccErrors" not in ran.parsed.metrics


def test_sigterm_during_the_window_is_an_error_with_the_evidence_so_far(tmp_path: Path) -> None:
    env = quiet_host(tmp_path)
    env["BURNIN_DURATION_SECONDS"] = "30"
    proc = subprocess.Popen(
        argv_of("host-health"), env=runner_env(env), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.strip() == "host_health_stage=window":
            proc.send_signal(signal.SIGTERM)
            break
    rest, err = proc.communicate(timeout=20)
    ran = finish("host-health", "".join(seen) + rest, err, proc.returncode)
    assert_contract(ran)
    assert ran.exit_code == 3
    assert ran.marker == "HOST_HEALTH_ERROR: terminated by signal SIGTERM before a verdict"
    assert ran.parsed.metrics["hostHealthStage"] == "window"
    assert ran.parsed.metrics["xidPreexisting"] == "0"  # known before the window: printed
    assert "xidEvents" not in ran.parsed.metrics  # the window was not watched to its end


def test_a_crash_prints_the_panic_and_its_trace_then_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_sysfs: Path) -> None:
        raise RuntimeError("sysfs exploded")

    monkeypatch.setattr(host_health, "read_aer", broken)
    out = io.StringIO()
    code = run("host-health", host_health.check, quiet_host(tmp_path), out, host_health.WORDS)
    ran = finish("host-health", out.getvalue(), "", code)
    assert_contract(ran)
    assert code == 3
    assert ran.parsed.metrics["hostHealthPanic"] == "RuntimeError: sysfs exploded"
    assert ran.parsed.metrics["hostHealthStage"] == "pcie-aer"  # how far it got
    assert "trace| Traceback (most recent call last):" in ran.stdout


def test_its_own_deadline_ends_a_stuck_read_in_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stuck(_sysfs: Path) -> None:
        time.sleep(30)

    monkeypatch.setattr(host_health, "read_aer", stuck)
    monkeypatch.setattr(host_health, "OWN_DEADLINE_S", 0.5)
    out = io.StringIO()
    code = run("host-health", host_health.check, quiet_host(tmp_path), out, host_health.WORDS)
    ran = finish("host-health", out.getvalue(), "", code)
    assert_contract(ran)
    assert code == 3
    assert ran.marker == "HOST_HEALTH_ERROR: host-health's own 0.5 s deadline passed"
    assert ran.parsed.metrics["hostHealthStage"] == "pcie-aer"


def test_the_window_is_clamped_to_thirty_seconds_and_defaults_to_fifteen() -> None:
    from glimmer.runners.program import Context
    from glimmer.runners.settings import Settings

    def window(env: dict[str, str]) -> int:
        settings = Settings(env)
        ctx = Context("host-health", settings, None, None)  # type: ignore[arg-type]
        return host_health.window_seconds(ctx)

    assert window({"BURNIN_DURATION_SECONDS": "600"}) == 30
    assert window({"BURNIN_DURATION_SECONDS": "0"}) == 15
    assert window({}) == 15
    assert window({"BURNIN_DURATION_SECONDS": "7"}) == 7


def test_a_malformed_duration_is_an_error_naming_the_variable() -> None:
    ran = run_runner("host-health", {"BURNIN_DURATION_SECONDS": "ten"})
    assert_contract(ran)
    assert ran.exit_code == 3
    assert ran.marker.startswith("HOST_HEALTH_ERROR: BURNIN_DURATION_SECONDS: 'ten'")
    assert "hostHealthPanic" not in ran.parsed.metrics
