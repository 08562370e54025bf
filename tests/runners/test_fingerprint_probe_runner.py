"""fingerprint-probe run for real on this machine's /sys, and on a fixture PCI tree holding what
this machine lacks (a 3D controller, a GB10 presenting as VGA, a BMC's VGA, an AMD Instinct)."""

from __future__ import annotations

import os
from pathlib import Path

from real_runner import assert_contract, run_runner


def pci(sysfs: Path, address: str, klass: str, vendor: str, device: str, driver: str = "") -> None:
    fn = sysfs / "bus" / "pci" / "devices" / address
    fn.mkdir(parents=True)
    for name, value in (("class", klass), ("vendor", vendor), ("device", device)):
        (fn / name).write_text(value + "\n")
    if driver:
        target = sysfs / "bus" / "pci" / "drivers" / driver
        target.mkdir(parents=True, exist_ok=True)
        os.symlink(target, fn / "driver")


def test_this_host_reports_its_accelerator_count_from_real_sysfs() -> None:
    ran = run_runner("fingerprint-probe", {"FINGERPRINT_PROBE_SYSFS": "/sys"})
    assert_contract(ran)
    assert ran.exit_code == 0
    count = int(ran.parsed.metrics["acceleratorCount"])  # always printed, even 0
    assert count >= 0
    assert ("pciAddresses" in ran.parsed.metrics) == (count > 0)


def test_accelerators_are_counted_by_class_and_vendor(tmp_path: Path) -> None:
    sysfs = tmp_path / "sys"
    pci(sysfs, "0000:00:00.0", "0x060000", "0x8086", "0x0d57")  # host bridge
    pci(sysfs, "0000:02:00.0", "0x030000", "0x1a03", "0x2000", "ast")  # BMC VGA: not one
    pci(sysfs, "0000:3b:00.0", "0x030200", "0x10de", "0x2330", "nvidia")  # H100: 3D controller
    pci(sysfs, "000f:01:00.0", "0x030000", "0x10de", "0x2e12", "nvidia")  # GB10: VGA
    pci(sysfs, "0000:c1:00.0", "0x038000", "0x1002", "0x74a1")  # MI300X, no driver bound
    ran = run_runner("fingerprint-probe", {"FINGERPRINT_PROBE_SYSFS": str(sysfs)})
    assert_contract(ran)
    assert ran.exit_code == 0
    m = ran.parsed.metrics
    assert m["acceleratorCount"] == "3"
    assert m["pciAddresses"] == "0000:3b:00.0,0000:c1:00.0,000f:01:00.0"
    assert m["pciVendorIds"] == "0x10de,0x1002,0x10de"
    assert m["pciDeviceIds"] == "0x2330,0x74a1,0x2e12"
    assert m["acceleratorVendors"] == "NVIDIA,AMD"
    assert m["acceleratorDrivers"] == "nvidia"


def test_no_bound_driver_omits_the_driver_list(tmp_path: Path) -> None:
    sysfs = tmp_path / "sys"
    pci(sysfs, "0000:3b:00.0", "0x120000", "0x1da3", "0x1020")  # Gaudi, no driver
    ran = run_runner("fingerprint-probe", {"FINGERPRINT_PROBE_SYSFS": str(sysfs)})
    assert_contract(ran)
    assert ran.parsed.metrics["acceleratorVendors"] == "Habana"
    assert "acceleratorDrivers" not in ran.parsed.metrics


def test_a_host_without_accelerators_reports_a_real_zero(tmp_path: Path) -> None:
    sysfs = tmp_path / "sys"
    pci(sysfs, "0000:00:00.0", "0x060000", "0x8086", "0x0d57")
    ran = run_runner("fingerprint-probe", {"FINGERPRINT_PROBE_SYSFS": str(sysfs)})
    assert_contract(ran)
    assert ran.exit_code == 0  # never 1: the profile's acceleratorCount gate decides
    assert ran.parsed.metrics == {"acceleratorCount": "0"}


def test_a_missing_sysfs_mount_is_a_declared_skip(tmp_path: Path) -> None:
    ran = run_runner("fingerprint-probe", {})  # default /host/sys: not mounted here
    assert_contract(ran)
    assert ran.exit_code == 2
    assert ran.parsed.verdict.value == "Skip"
    assert ran.marker.startswith("FINGERPRINT_PROBE_SKIP: no sysfs at /host/sys")
    empty = tmp_path / "mountpoint"
    empty.mkdir()
    ran = run_runner("fingerprint-probe", {"FINGERPRINT_PROBE_SYSFS": str(empty)})
    assert ran.exit_code == 2  # an empty mount point reads as no mount
