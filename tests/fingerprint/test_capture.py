"""Capture on this host (a fake sysfs tree and a stand-in NVML), on the simulated fleet, and the
NodeFingerprint object name rule."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from glimmer.backends.sim.fleet import SIM_KERNEL, SIM_OS, fleet_backend, fleet_nodes
from glimmer.fingerprint.digest import digest
from glimmer.fingerprint.host import capture_host, os_image
from glimmer.fingerprint.identity import Gpu, Nic
from glimmer.fingerprint.naming import fingerprint_name
from glimmer.fingerprint.nvml import nvml_gpus
from glimmer.fingerprint.reconcile import observe
from glimmer.fingerprint.simulated import capture_simulated
from glimmer.fingerprint.sysfs import accelerators, network_interfaces
from glimmer.fleet.load import load_topology
from glimmer.sim.twin import FleetSim


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


@pytest.fixture
def sysfs(tmp_path: Path) -> Path:
    root = tmp_path / "sys"
    pci = root / "bus" / "pci" / "devices"
    # An NVIDIA GPU bound to the nvidia module, a VGA-class GB10, a BMC's VGA, an Intel iGPU.
    for addr, vendor, device, klass in [
        ("0000:17:00.0", "0x10de", "0x2330", "0x030200"),
        ("000f:01:00.0", "0x10de", "0x2e12", "0x030000"),
        ("0000:03:00.0", "0x1a03", "0x2000", "0x030000"),
        ("0000:00:02.0", "0x8086", "0x9a49", "0x030000"),
        ("0000:c1:00.0", "0x1002", "0x74a1", "0x120000"),
    ]:
        write(pci / addr / "vendor", vendor)
        write(pci / addr / "device", device)
        write(pci / addr / "class", klass)
    (root / "bus" / "pci" / "drivers" / "nvidia").mkdir(parents=True)
    (pci / "0000:17:00.0" / "driver").symlink_to(root / "bus" / "pci" / "drivers" / "nvidia")
    write(root / "module" / "nvidia" / "version", "570.133.20")
    net = root / "class" / "net"
    # eth0: a real port; ib0: an IPoIB port with its RDMA device; lo and a veth: no device.
    for name, kind, speed, mtu in [("eth0", "1", "100000", "9000"), ("ib0", "32", "", "4092")]:
        write(net / name / "device" / "vendor", "0x15b3")
        write(net / name / "device" / "device", "0x1021")
        write(net / name / "type", kind)
        write(net / name / "mtu", mtu)
        if speed:
            write(net / name / "speed", speed)
    (net / "ib0" / "device" / "infiniband" / "mlx5_0").mkdir(parents=True)
    write(net / "lo" / "type", "772")
    write(net / "veth1" / "type", "1")
    # An RDMA device with no network interface (a port in IB mode without IPoIB).
    write(root / "class" / "infiniband" / "mlx5_0" / "ports" / "1" / "link_layer", "InfiniBand")
    write(root / "class" / "infiniband" / "mlx5_1" / "ports" / "1" / "link_layer", "InfiniBand")
    write(root / "class" / "infiniband" / "mlx5_1" / "device" / "vendor", "0x15b3")
    return root


def test_sysfs_nics_and_rdma_devices(sysfs: Path) -> None:
    assert network_interfaces(sysfs) == [
        Nic(
            "eth0",
            pci_vendor="0x15b3",
            model="0x1021",
            link_layer="Ethernet",
            speed_mbps=100000,
            mtu=9000,
        ),
        Nic(
            "ib0",
            pci_vendor="0x15b3",
            model="0x1021",
            rdma_device="mlx5_0",
            link_layer="InfiniBand",
            mtu=4092,
        ),
        Nic("mlx5_1", pci_vendor="0x15b3", rdma_device="mlx5_1", link_layer="InfiniBand"),
    ]


def test_sysfs_accelerators_include_vga_class_parts_but_not_igpus_or_bmcs(sysfs: Path) -> None:
    assert accelerators(sysfs) == [
        Gpu(0, "nvidia", "0x2330", driver_version="570.133.20"),
        Gpu(1, "amd", "0x74a1"),
        Gpu(2, "nvidia", "0x2e12"),
    ]


def test_host_capture_prefers_nvml_for_nvidia_and_keeps_other_vendors(
    sysfs: Path, tmp_path: Path
) -> None:
    release = tmp_path / "os-release"
    release.write_text('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.2 LTS"\n')
    h100 = Gpu(0, "nvidia", "NVIDIA H100 80GB HBM3", "sm_90", 80 * 2**30, "570.133.20")
    ident = capture_host(sysfs=sysfs, os_release=release, nvml=lambda: [h100])
    assert ident.os_image == "Ubuntu 24.04.2 LTS" and ident.kernel
    assert [(g.vendor, g.model) for g in ident.gpus] == [
        ("nvidia", "NVIDIA H100 80GB HBM3"),
        ("amd", "0x74a1"),
    ]
    assert "kubernetes.io/arch" in dict(ident.labels)
    without = capture_host(sysfs=sysfs, os_release=release, nvml=lambda: None)
    assert [g.vendor for g in without.gpus] == ["nvidia", "amd", "nvidia"]


def test_a_host_without_sysfs_or_nvml_has_no_devices(tmp_path: Path) -> None:
    ident = capture_host(sysfs=tmp_path / "none", os_release=tmp_path / "none", nvml=lambda: None)
    assert ident.gpus == () and ident.nics == () and ident.os_image


def test_os_release_without_pretty_name_falls_back(tmp_path: Path) -> None:
    release = tmp_path / "os-release"
    release.write_text("ID=debian\n")
    assert os_image(release)


def test_nvml_is_optional() -> None:
    # pynvml is an extra; without it (or without a driver) the answer is "nothing", not an error.
    result = nvml_gpus()
    assert result is None or all(g.vendor == "nvidia" for g in result)


def test_simulated_node_identity_has_gpus_nics_and_hardware_labels() -> None:
    topo = load_topology("ai-factory")
    views = {v.name: v for v in fleet_nodes(topo)}
    host = topo.nodes[0].hostname
    ident = capture_simulated(
        topo, host, labels=views[host].labels, kernel=SIM_KERNEL, os_image=SIM_OS
    )
    assert ident.kernel == SIM_KERNEL and ident.os_image == SIM_OS
    assert len(ident.gpus) == topo.nodes[0].gpu_count
    assert {(g.vendor, g.arch) for g in ident.gpus} == {("nvidia", "sm_90")}
    assert [n.name for n in ident.nics] == [n.name for n in topo.nodes[0].nics]
    labels = dict(ident.labels)
    assert "nvidia.com/gpu.product" in labels and "kubernetes.io/arch" in labels
    assert not any(k.startswith("glimmer.ai/pool") or k.endswith("/rack") for k in labels)


def test_nodes_of_one_shape_share_a_digest_whatever_their_gpu_uuids() -> None:
    # Identity leaves out UUIDs and serials: a swapped identical part is not drift.
    topo = load_topology("ai-factory")
    same_shape = [
        capture_simulated(topo, n.hostname) for n in topo.nodes if n.pool == topo.nodes[0].pool
    ]
    assert len({digest(i) for i in same_shape}) == 1


def test_drift_on_the_simulator_never_creates_runs() -> None:
    topo = load_topology("ai-factory")
    backend = fleet_backend(FleetSim(topo))
    stored = {}
    for view in backend.list_nodes():
        ident = capture_simulated(topo, view.name, labels=view.labels, kernel=view.kernel)
        stored[view.name] = observe(None, view.name, ident, backend.now()).fingerprint
    drifted = 0
    for view in backend.list_nodes():
        ident = capture_simulated(topo, view.name, labels=view.labels, kernel="6.9.0-upgraded")
        obs = observe(stored[view.name], view.name, ident, backend.now())
        drifted += obs.drifted
    assert drifted == len(topo.nodes)
    assert backend.list_runs() == []


@pytest.mark.parametrize(
    ("node", "pattern"),
    [
        ("gpu-01", r"gpu-01"),
        ("gpu-01.lab.example.com", r"gpu-01\.lab\.example\.com"),
        ("GPU_01", r"gpu-01-[0-9a-f]{16}"),
        ("Rack 3/Node..7", r"rack-3-node\.7-[0-9a-f]{16}"),
        ("___", r"node-[0-9a-f]{16}"),
        ("x" * 300, r"x{190}-[0-9a-f]{16}"),
    ],
)
def test_object_name_rule(node: str, pattern: str) -> None:
    name = fingerprint_name(node)
    assert re.fullmatch(pattern, name), name
    assert len(name) <= 253


def test_names_that_sanitise_alike_stay_apart() -> None:
    assert fingerprint_name("GPU_01") != fingerprint_name("gpu_01")


class _FakeNvml:
    """The few pynvml calls the capture makes, for two H100s."""

    def __init__(self, fail_init: bool = False) -> None:
        self.fail_init = fail_init
        self.shut = False

    def nvmlInit(self) -> None:
        if self.fail_init:
            raise RuntimeError("NVML Shared Library Not Found")

    def nvmlShutdown(self) -> None:
        self.shut = True

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"570.133.20"

    def nvmlDeviceGetCount(self) -> int:
        return 2

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetCudaComputeCapability(self, handle: int) -> tuple[int, int]:
        return (9, 0)

    def nvmlDeviceGetName(self, handle: int) -> str:
        return "NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> object:
        return type("Memory", (), {"total": 85_520_809_984})()


def test_nvml_reads_every_gpu_and_shuts_down(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _FakeNvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert nvml_gpus() == [
        Gpu(i, "nvidia", "NVIDIA H100 80GB HBM3", "sm_90", 85_520_809_984, "570.133.20")
        for i in range(2)
    ]
    assert fake.shut


def test_nvml_without_a_driver_is_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _FakeNvml(fail_init=True))
    assert nvml_gpus() is None
