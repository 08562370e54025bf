"""How much memory and how many threads memory-stress gives stressapptest (§9.7).

The region is a fraction (70 %) of the smaller of the cgroup memory limit and ``MemAvailable``:
the rest is headroom, because a process that allocates its whole limit is OOM-killed and that
costs the run its verdict. Threads are the usable CPUs, clamped by the cgroup CPU quota: threads
beyond the quota add scheduling latency, not memory traffic.

Every read takes the roots it reads under (``/proc``, ``/sys``), so a fixture tree can stand in
for the host. cgroup v2 (``memory.max``, ``cpu.max``) and v1 (``memory.limit_in_bytes``,
``cpu.cfs_quota_us``) are both read; every level from the process's own cgroup up to the root
counts, since any ancestor's limit binds.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
# cgroup v1 reports "no limit" as a huge page-rounded number; anything above this is no limit.
_V1_UNLIMITED = 1 << 60


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def meminfo_kib(proc: Path) -> dict[str, int]:
    """``/proc/meminfo`` as {field: kB}; empty when unreadable."""
    text = _read(proc / "meminfo") or ""
    out: dict[str, int] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            out[name.strip()] = int(fields[0])
    return out


def _cgroup_dirs(proc: Path, sysfs: Path) -> tuple[list[Path], list[Path], list[Path]]:
    """(v2 dirs, v1 memory dirs, v1 cpu dirs) from this process's cgroup to the root."""
    base = sysfs / "fs" / "cgroup"
    v2: list[Path] = []
    v1_mem: list[Path] = []
    v1_cpu: list[Path] = []
    for line in (_read(proc / "self" / "cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, rel = parts
        names = set(controllers.split(","))
        if controllers == "":
            # A hybrid host mounts the v2 hierarchy beside the v1 controllers, at unified/.
            hybrid = not (base / "cgroup.controllers").exists() and (base / "unified").is_dir()
            v2 = _ancestors(base / "unified" if hybrid else base, rel)
        if "memory" in names:
            v1_mem = _ancestors(base / "memory", rel)
        if "cpu" in names:
            v1_cpu = _ancestors(base / "cpu", rel) + _ancestors(base / "cpu,cpuacct", rel)
    return v2, v1_mem, v1_cpu


def _ancestors(root: Path, rel: str) -> list[Path]:
    parts = [p for p in rel.strip().split("/") if p]
    dirs = [root.joinpath(*parts[:i]) for i in range(len(parts), -1, -1)]
    # Inside a container the cgroup namespace shows "/" while the mount is the container's own.
    return [d for d in dirs if d.is_dir()] or ([root] if root.is_dir() else [])


def cgroup_memory_limit(proc: Path, sysfs: Path) -> int | None:
    """The tightest memory limit in bytes over this process's cgroups; None when unlimited."""
    v2, v1_mem, _ = _cgroup_dirs(proc, sysfs)
    limits: list[int] = []
    for d in v2:
        raw = _read(d / "memory.max")
        if raw and raw.isdigit():
            limits.append(int(raw))
    for d in v1_mem:
        raw = _read(d / "memory.limit_in_bytes")
        if raw and raw.isdigit() and int(raw) < _V1_UNLIMITED:
            limits.append(int(raw))
    return min(limits) if limits else None


def cgroup_cpu_quota(proc: Path, sysfs: Path) -> float | None:
    """The tightest CPU quota in CPUs (``quota / period``); None when unlimited."""
    v2, _, v1_cpu = _cgroup_dirs(proc, sysfs)
    quotas: list[float] = []
    for d in v2:
        fields = (_read(d / "cpu.max") or "").split()
        if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit() and int(fields[1]):
            quotas.append(int(fields[0]) / int(fields[1]))
    for d in v1_cpu:
        quota = _read(d / "cpu.cfs_quota_us")
        period = _read(d / "cpu.cfs_period_us")
        if quota and period and quota.isdigit() and period.isdigit() and int(period):
            quotas.append(int(quota) / int(period))
    return min(quotas) if quotas else None


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def threads_for(cpus: int, quota: float | None) -> int:
    """Copy threads: the usable CPUs, clamped by the quota (rounded up: a 1.5-CPU quota keeps
    two threads busy), never fewer than one."""
    if quota is not None:
        cpus = min(cpus, max(1, math.ceil(quota)))
    return max(1, cpus)


@dataclass(frozen=True)
class Sizing:
    """The region stressapptest gets, and what it was derived from (bytes; None = unknown)."""

    region_mib: int
    mem_total: int | None
    mem_available: int | None
    cgroup_limit: int | None
    fraction: float

    @property
    def covered_pct(self) -> float | None:
        if not self.mem_total:
            return None
        return 100.0 * self.region_mib * MIB / self.mem_total

    @property
    def limit_binds(self) -> bool:
        """Whether the cgroup limit, not the machine, is what the region was cut to."""
        return self.cgroup_limit is not None


def size_region(mem_available: int, cgroup_limit: int | None, fraction: float) -> int:
    """MiB to test: ``fraction`` of min(cgroup limit, MemAvailable), rounded down."""
    budget = mem_available if cgroup_limit is None else min(cgroup_limit, mem_available)
    return int(budget * fraction) // MIB


def read_sizing(proc: Path, sysfs: Path, fraction: float) -> Sizing | None:
    """The automatic sizing from the host; None when ``MemAvailable`` cannot be read (the
    runner then refuses rather than guess)."""
    info = meminfo_kib(proc)
    if "MemAvailable" not in info:
        return None
    available = info["MemAvailable"] * 1024
    total = info["MemTotal"] * 1024 if "MemTotal" in info else None
    limit = cgroup_memory_limit(proc, sysfs)
    return Sizing(size_region(available, limit, fraction), total, available, limit, fraction)
