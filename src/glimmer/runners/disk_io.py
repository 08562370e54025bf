"""disk-io (§9.14): storage bandwidth and latency with O_DIRECT, standard library only.

Writes one new file (O_EXCL) of ``DISK_IO_SIZE_MB`` in ``DISK_IO_BLOCK_KB`` blocks with O_DIRECT
and an fsync inside the timed window, reads it back with O_DIRECT, and removes it on every exit
path (SIGTERM included) — but never a file it did not create: a leftover is refused, not
deleted (§12: the cleanup once deleted the very file its refusal protected).

Exit: 0 measured; 1 an I/O error from the device mid-run (EIO and kin: measured about the
part); 2 no ``DISK_IO_PATH`` declared, or O_DIRECT unsupported there; 3 refused (space, a
leftover file, a bad block size) and every other machinery failure, including running out of
space mid-run and a read-back that moved nothing (never a Fail: §12 lesson 16).
"""

from __future__ import annotations

import contextlib
import errno
import math
import mmap
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from glimmer.runners.deadline import Deadline
from glimmer.runners.outcome import ConfigError, Outcome, Stop, errored, failed, passed, skipped
from glimmer.runners.program import Context, main

KIND = "disk-io"
PATH = "DISK_IO_PATH"
SIZE_MB = "DISK_IO_SIZE_MB"
BLOCK_KB = "DISK_IO_BLOCK_KB"
# The headroom that must remain free after the file is written (§9.14: 2 GiB). A variable so a
# test can run a small file on a small filesystem; sites leave it alone.
MIN_FREE_MB = "DISK_IO_MIN_FREE_MB"
DEFAULT_DURATION_S = 120
FILE_NAME = "glimmer-disk-io.tmp"
MIB = 1024 * 1024
# Errors the device reported: a measurement about the part, hence Fail.
DEVICE_ERRNOS = frozenset({errno.EIO, errno.EREMOTEIO, errno.EUCLEAN, errno.EBADMSG})
SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# The write phase may use this share of the duration; the read-back gets the rest.
WRITE_SHARE = 0.5


@dataclass
class Phase:
    """One direction's figures."""

    moved: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    device_error: str = ""

    def megabytes_per_second(self) -> float | None:
        if self.moved <= 0 or self.seconds <= 0:
            return None  # a direction that moved nothing emits nothing
        return self.moved / 1e6 / self.seconds


@dataclass(frozen=True)
class Config:
    path: Path
    size_bytes: int
    block_bytes: int
    min_free_bytes: int
    duration_s: int


def read_config(ctx: Context) -> Config | Outcome:
    settings = ctx.settings
    raw = settings.raw(PATH)
    if raw is None:
        return skipped(f"no {PATH} declared: nothing to measure")
    path = Path(raw)
    if not path.is_absolute():
        raise ConfigError(PATH, f"{raw!r} is not an absolute path")
    size_mb = settings.integer(SIZE_MB, 1024, minimum=1)
    block_kb = settings.integer(BLOCK_KB, 1024, minimum=4)
    if block_kb % 4:
        raise ConfigError(BLOCK_KB, f"{block_kb} is not a multiple of 4 KiB (O_DIRECT alignment)")
    min_free_mb = settings.integer(MIN_FREE_MB, 2048, minimum=0)
    return Config(
        path, size_mb * MIB, block_kb * 1024, min_free_mb * MIB,
        settings.duration(DEFAULT_DURATION_S),
    )  # fmt: skip


def refuse_without_room(cfg: Config) -> None:
    try:
        st = os.statvfs(cfg.path)
    except OSError as exc:
        raise Stop(errored(f"cannot stat {cfg.path}: {exc.strerror}")) from None
    free = st.f_bavail * st.f_frsize
    if free - cfg.size_bytes < cfg.min_free_bytes:
        raise Stop(
            errored(
                f"refused: writing {cfg.size_bytes // MIB} MiB to {cfg.path} would leave "
                f"{max(free - cfg.size_bytes, 0) // MIB} MiB free, under the "
                f"{cfg.min_free_bytes // MIB} MiB that must remain ({MIN_FREE_MB})"
            )
        )


def _io_error(exc: OSError, phase: Phase, doing: str, done: int) -> None:
    """Classify an error from the device: space is machinery (Stop), device errors are
    recorded on the phase (Fail), anything else is machinery."""
    if exc.errno in SPACE_ERRNOS:
        raise Stop(errored(f"ran out of space {doing} after {done // MIB} MiB: {exc.strerror}"))
    if exc.errno in DEVICE_ERRNOS:
        phase.device_error = f"{doing} at {done // MIB} MiB: {exc.strerror}"
        return
    raise Stop(errored(f"{doing} failed after {done // MIB} MiB: {exc.strerror}"))


def _pattern(buf: mmap.mmap, index: int) -> None:
    # Each block differs in its first bytes, so deduplicating storage cannot flatter the figure.
    buf[0:8] = index.to_bytes(8, "little")


def write_phase(fd: int, cfg: Config, buf: mmap.mmap, deadline: Deadline) -> Phase:
    phase = Phase()
    blocks = math.ceil(cfg.size_bytes / cfg.block_bytes)
    budget = cfg.duration_s * WRITE_SHARE
    start = time.perf_counter()
    for index in range(blocks):
        if deadline.elapsed() >= budget:
            break
        _pattern(buf, index)
        began = time.perf_counter()
        try:
            n = os.pwrite(fd, buf, index * cfg.block_bytes)
        except OSError as exc:
            _io_error(exc, phase, "writing", phase.moved)
            break
        phase.latencies.append(time.perf_counter() - began)
        phase.moved += n
        if n < cfg.block_bytes:
            raise Stop(errored(f"short write of {n} bytes after {phase.moved // MIB} MiB"))
    try:
        os.fsync(fd)  # inside the timed window: the data is on the device, not in a cache
    except OSError as exc:
        _io_error(exc, phase, "fsync", phase.moved)
    phase.seconds = time.perf_counter() - start
    return phase


def read_phase(fd: int, cfg: Config, buf: mmap.mmap, written: int, deadline: Deadline) -> Phase:
    phase = Phase()
    start = time.perf_counter()
    offset = 0
    while offset < written and not deadline.expired():
        began = time.perf_counter()
        try:
            n = os.preadv(fd, [buf], offset)
        except OSError as exc:
            _io_error(exc, phase, "reading", offset)
            break
        phase.latencies.append(time.perf_counter() - began)
        if n <= 0:
            break
        phase.moved += n
        offset += n
    phase.seconds = time.perf_counter() - start
    return phase


def nearest_rank(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def measure(ctx: Context) -> Outcome:
    cfg = read_config(ctx)
    if isinstance(cfg, Outcome):
        return cfg
    report = ctx.report
    if not cfg.path.is_dir():
        return errored(f"{cfg.path} is not a directory: mount it writable through hostPaths")
    report.metric("diskIoPath", str(cfg.path))
    refuse_without_room(cfg)
    target = cfg.path / FILE_NAME
    deadline = Deadline(cfg.duration_s)
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return errored(
            f"refused: {target} already exists (another disk-io run, or a killed one); "
            "it is left alone: remove it by hand once nothing uses it"
        )
    except OSError as exc:
        return errored(f"cannot create {target}: {exc.strerror}")
    try:
        return _measure_file(ctx, cfg, target, deadline)
    finally:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()


def _open_direct(target: Path, flags: int) -> int | None:
    try:
        return os.open(target, flags | os.O_DIRECT)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return None
        raise Stop(errored(f"cannot open {target}: {exc.strerror}")) from None


def _measure_file(ctx: Context, cfg: Config, target: Path, deadline: Deadline) -> Outcome:
    report = ctx.report
    buf = mmap.mmap(-1, cfg.block_bytes)  # page-aligned, as O_DIRECT requires
    buf.write(os.urandom(cfg.block_bytes))
    wfd = _open_direct(target, os.O_WRONLY)
    if wfd is None:
        return skipped(f"O_DIRECT is not supported by the filesystem at {cfg.path}")
    try:
        wrote = write_phase(wfd, cfg, buf, deadline)
    finally:
        os.close(wfd)
    read = Phase()
    if not wrote.device_error and wrote.moved > 0:
        rfd = _open_direct(target, os.O_RDONLY)
        if rfd is None:
            return skipped(f"O_DIRECT reads are not supported at {cfg.path}")
        try:
            read = read_phase(rfd, cfg, buf, wrote.moved, deadline)
        finally:
            os.close(rfd)
    report.metric("writeBandwidthMBs", wrote.megabytes_per_second())
    report.metric("readBandwidthMBs", read.megabytes_per_second())
    latencies = wrote.latencies + read.latencies
    if latencies:
        report.metric("ioLatencyUs", sum(latencies) / len(latencies) * 1e6)
        report.metric("p99LatencyUs", nearest_rank(latencies, 99) * 1e6)
    errors = [p.device_error for p in (wrote, read) if p.device_error]
    report.metric("ioErrors", len(errors))  # always: 0 is a real measurement
    if errors:
        return failed(f"I/O error from the device: {'; '.join(errors)}")
    if wrote.moved <= 0:
        return errored(f"the {cfg.duration_s} s duration left no time to write anything")
    if read.moved <= 0:
        return errored("the read-back moved no bytes (deadline reached): nothing judged on read")
    return passed()


if __name__ == "__main__":
    main(KIND, measure)
