"""The perftest kinds' RDMA side on fixture sysfs trees: devices and ports, the port and RoCE v2
GID index chosen by the routed local address, InfiniBand by netdev, and the memlock fit."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.runners.fabric_soak_stats import counter_delta, read_counters, window_stats
from glimmer.runners.ib_write_bw_rdma import (
    SelectionError,
    discover,
    fit_memlock,
    peer_memory_providers,
    select,
)

MIB = 1024 * 1024


def make_port(
    sysfs: Path,
    device: str,
    *,
    state: str = "4: ACTIVE",
    link: str = "Ethernet",
    gids: dict[int, tuple[str, str, str]] | None = None,
    netdevs: tuple[str, ...] = (),
    counters: dict[str, int] | None = None,
) -> None:
    """One device with port 1; gids maps index -> (gid, type, netdev)."""
    dev = sysfs / "class" / "infiniband" / device
    port = dev / "ports" / "1"
    for sub in ("gids", "gid_attrs/types", "gid_attrs/ndevs", "counters"):
        (port / sub).mkdir(parents=True, exist_ok=True)
    (port / "state").write_text(state + "\n")
    (port / "link_layer").write_text(link + "\n")
    for i, (gid, kind, ndev) in (gids or {}).items():
        (port / "gids" / str(i)).write_text(gid + "\n")
        (port / "gid_attrs" / "types" / str(i)).write_text(kind + "\n")
        (port / "gid_attrs" / "ndevs" / str(i)).write_text(ndev + "\n")
    (port / "gids" / "9").write_text("0000:0000:0000:0000:0000:0000:0000:0000\n")
    for name in netdevs:
        (dev / "device" / "net" / name).mkdir(parents=True)
    for name, value in (counters or {}).items():
        (port / "counters" / name).write_text(f"{value}\n")


ROCE = {
    0: ("fe80:0000:0000:0000:0a00:27ff:fe00:0001", "IB/RoCE v1", "enp1s0f0"),
    1: ("fe80:0000:0000:0000:0a00:27ff:fe00:0001", "RoCE v2", "enp1s0f0"),
    2: ("0000:0000:0000:0000:0000:ffff:0a4d:0002", "IB/RoCE v1", "enp1s0f0"),
    3: ("0000:0000:0000:0000:0000:ffff:0a4d:0002", "RoCE v2", "enp1s0f0"),
}


def test_no_infiniband_class_means_no_device(tmp_path: Path) -> None:
    assert discover(tmp_path) == []


def test_the_roce_v2_gid_of_the_routed_address_names_port_and_index(tmp_path: Path) -> None:
    make_port(tmp_path, "mlx5_0", gids=ROCE)
    make_port(
        tmp_path,
        "mlx5_1",
        gids={3: ("0000:0000:0000:0000:0000:ffff:0a4e:0002", "RoCE v2", "enp2s0")},
    )
    ports = discover(tmp_path)
    assert [p.device for p in ports] == ["mlx5_0", "mlx5_1"]
    assert len(ports[0].gids) == 4  # the all-zero slot is no GID
    chosen = select(ports, "enp1s0f0", "10.77.0.2")
    assert (chosen.port.device, chosen.gid_index) == ("mlx5_0", 3)
    other = select(ports, "", "10.78.0.2")
    assert (other.port.device, other.gid_index) == ("mlx5_1", 3)


def test_infiniband_is_chosen_by_the_ipoib_netdev_without_a_gid_index(tmp_path: Path) -> None:
    make_port(tmp_path, "mlx5_0", link="InfiniBand", netdevs=("ib0",))
    chosen = select(discover(tmp_path), "ib0", "192.168.10.2")
    assert chosen.port.device == "mlx5_0" and chosen.gid_index is None


def test_a_route_no_port_carries_or_a_down_port_is_refused(tmp_path: Path) -> None:
    make_port(tmp_path, "mlx5_0", state="1: DOWN", gids=ROCE)
    ports = discover(tmp_path)
    assert not ports[0].active
    with pytest.raises(SelectionError, match="DOWN"):
        select(ports, "enp1s0f0", "10.77.0.2")
    with pytest.raises(SelectionError, match="no RDMA port"):
        select(ports, "eth9", "172.16.0.1")


def test_a_roce_port_without_a_v2_gid_for_the_address_is_refused(tmp_path: Path) -> None:
    make_port(tmp_path, "mlx5_0", gids={0: ROCE[0]}, netdevs=("enp1s0f0",))
    with pytest.raises(SelectionError, match="no RoCE v2 GID"):
        select(discover(tmp_path), "enp1s0f0", "10.77.0.2")


def test_memlock_fit_shrinks_the_message_before_the_qps() -> None:
    assert fit_memlock(MIB, 4, None) is not None
    whole = fit_memlock(MIB, 4, 64 * MIB)
    assert whole is not None and (whole.message_bytes, whole.qps, whole.note) == (MIB, 4, "")
    # containerd's 8 MiB default holds 4 MiB of buffers: 512 KiB x 4 QPs x 2.
    shrunk = fit_memlock(MIB, 4, 8 * MIB)
    assert shrunk is not None and (shrunk.message_bytes, shrunk.qps) == (512 * 1024, 4)
    assert "1048576 -> 524288" in shrunk.note
    tight = fit_memlock(MIB, 4, 256 * 1024)
    assert tight is not None and (tight.message_bytes, tight.qps) == (65536, 1)
    assert fit_memlock(MIB, 4, 64 * 1024) is None


def test_peer_memory_providers_are_listed(tmp_path: Path) -> None:
    assert peer_memory_providers(tmp_path) == []
    (tmp_path / "kernel" / "mm" / "memory_peers" / "nv_mem").mkdir(parents=True)
    assert peer_memory_providers(tmp_path) == ["nv_mem"]


def test_soak_windows_fold_to_min_p1_mean_peak_and_spread() -> None:
    stats = window_stats([99.0, 98.0, 100.0, 99.0])
    assert stats is not None
    assert (stats.minimum, stats.p1, stats.peak) == (98.0, 98.0, 100.0)
    assert stats.mean == 99.0
    assert round(stats.std_dev, 4) == 0.7071
    assert window_stats([]) is None


def test_port_counters_are_a_delta_and_unknown_after_a_reset(tmp_path: Path) -> None:
    make_port(tmp_path, "mlx5_0", gids=ROCE, counters={"symbol_error": 3, "link_downed": 1})
    before = read_counters(tmp_path, "mlx5_0", 1)
    assert before == {"symbol_error": 3, "link_downed": 1}
    assert counter_delta(before, {"symbol_error": 5, "link_downed": 2}) == 3
    assert counter_delta(before, {"symbol_error": 0, "link_downed": 1}) is None
    assert counter_delta({}, {}) is None
