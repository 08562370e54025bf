"""memory-stress sizing (§9.7) on fixture /proc and /sys trees: 70 % of min(cgroup limit,
MemAvailable), threads clamped by the CPU quota, cgroup v1, v2 and hybrid hosts."""

from __future__ import annotations

from pathlib import Path

from glimmer.runners.memory_stress import sat_seconds
from glimmer.runners.memory_stress_sizing import (
    MIB,
    cgroup_cpu_quota,
    cgroup_memory_limit,
    read_sizing,
    size_region,
    threads_for,
)

GIB = 1024 * MIB


def _tree(
    tmp: Path,
    *,
    available_kib: int = 16 * 1024 * 1024,
    total_kib: int = 32 * 1024 * 1024,
    cgroup: str = "0::/\n",
    files: dict[str, str] | None = None,
) -> tuple[Path, Path]:
    proc, sysfs = tmp / "proc", tmp / "sys"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text(
        f"MemTotal: {total_kib} kB\nMemFree: 1 kB\nMemAvailable: {available_kib} kB\n"
    )
    (proc / "self" / "cgroup").write_text(cgroup)
    (sysfs / "fs" / "cgroup").mkdir(parents=True)
    for rel, text in (files or {}).items():
        path = sysfs / "fs" / "cgroup" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return proc, sysfs


def test_region_is_seventy_percent_of_the_smaller_budget() -> None:
    assert size_region(10 * GIB, None, 0.7) == 7168
    assert size_region(10 * GIB, 2 * GIB, 0.7) == 1433
    assert size_region(GIB, 8 * GIB, 0.7) == 716


def test_no_cgroup_limit_sizes_from_mem_available(tmp_path: Path) -> None:
    proc, sysfs = _tree(tmp_path, available_kib=4 * 1024 * 1024)
    sizing = read_sizing(proc, sysfs, 0.7)
    assert sizing is not None
    assert sizing.cgroup_limit is None
    assert sizing.region_mib == 2867
    assert sizing.covered_pct is not None and round(sizing.covered_pct, 1) == 8.7


def test_a_cgroup_v2_limit_binds_at_every_ancestor(tmp_path: Path) -> None:
    proc, sysfs = _tree(
        tmp_path,
        cgroup="0::/kubepods/pod1/ctr\n",
        files={
            "kubepods/memory.max": "max\n",
            "kubepods/pod1/memory.max": str(GIB) + "\n",
            "kubepods/pod1/ctr/memory.max": str(2 * GIB) + "\n",
            "kubepods/pod1/ctr/cpu.max": "150000 100000\n",
        },
    )
    assert cgroup_memory_limit(proc, sysfs) == GIB
    sizing = read_sizing(proc, sysfs, 0.7)
    assert sizing is not None and sizing.region_mib == 716
    assert cgroup_cpu_quota(proc, sysfs) == 1.5


def test_a_cgroup_v1_limit_and_quota_are_read(tmp_path: Path) -> None:
    proc, sysfs = _tree(
        tmp_path,
        cgroup="4:memory:/job\n1:cpu,cpuacct:/job\n0::/\n",
        files={
            "memory/job/memory.limit_in_bytes": str(512 * MIB),
            "memory/memory.limit_in_bytes": "9223372036854771712",
            "cpu,cpuacct/job/cpu.cfs_quota_us": "200000",
            "cpu,cpuacct/job/cpu.cfs_period_us": "100000",
        },
    )
    assert cgroup_memory_limit(proc, sysfs) == 512 * MIB
    assert cgroup_cpu_quota(proc, sysfs) == 2.0


def test_v1_unlimited_and_v1_no_quota_read_as_none(tmp_path: Path) -> None:
    proc, sysfs = _tree(
        tmp_path,
        cgroup="4:memory:/\n1:cpu:/\n0::/\n",
        files={
            "memory/memory.limit_in_bytes": "9223372036854771712",
            "cpu/cpu.cfs_quota_us": "-1",
            "cpu/cpu.cfs_period_us": "100000",
        },
    )
    assert cgroup_memory_limit(proc, sysfs) is None
    assert cgroup_cpu_quota(proc, sysfs) is None


def test_a_hybrid_host_reads_v2_under_unified(tmp_path: Path) -> None:
    proc, sysfs = _tree(
        tmp_path, cgroup="0::/svc\n", files={"unified/svc/memory.max": str(3 * GIB)}
    )
    assert cgroup_memory_limit(proc, sysfs) == 3 * GIB


def test_unreadable_meminfo_gives_no_sizing(tmp_path: Path) -> None:
    assert read_sizing(tmp_path / "nowhere", tmp_path, 0.7) is None


def test_threads_are_the_cpus_clamped_by_the_quota() -> None:
    assert threads_for(16, None) == 16
    assert threads_for(16, 1.5) == 2
    assert threads_for(16, 0.1) == 1
    assert threads_for(2, 8.0) == 2


def test_the_tool_gets_a_tenth_less_than_the_duration_at_most_a_minute() -> None:
    assert sat_seconds(600) == 540
    assert sat_seconds(3600) == 3540
    assert sat_seconds(3) == 2
    assert sat_seconds(1) == 1
