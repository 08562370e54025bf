"""disk-io run for real: a real O_DIRECT write+fsync and read-back under tmp_path, and §9.14's
refusals on a small full tmpfs mounted by the test (CI runs as root)."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from real_runner import argv_of, assert_contract, finish, run_runner, runner_env

from glimmer.runners import disk_io
from glimmer.runners.outcome import Stop


def test_a_real_write_and_read_back_is_measured_and_the_file_removed(tmp_path: Path) -> None:
    ran = run_runner("disk-io", {"DISK_IO_PATH": str(tmp_path), "DISK_IO_SIZE_MB": "32"})
    assert_contract(ran)
    assert ran.exit_code == 0, ran.stdout
    m = ran.parsed.metrics
    assert float(m["writeBandwidthMBs"]) > 0
    assert float(m["readBandwidthMBs"]) > 0
    assert float(m["ioLatencyUs"]) > 0
    assert float(m["p99LatencyUs"]) > 0
    assert m["ioErrors"] == "0"
    assert m["diskIoPath"] == str(tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert ran.marker == "DISK_IO_PASS"


def test_small_blocks_are_timed_one_operation_each(tmp_path: Path) -> None:
    ran = run_runner(
        "disk-io",
        {"DISK_IO_PATH": str(tmp_path), "DISK_IO_SIZE_MB": "4", "DISK_IO_BLOCK_KB": "64"},
    )
    assert_contract(ran)
    assert ran.exit_code == 0
    assert float(ran.parsed.metrics["p99LatencyUs"]) > 0


@pytest.fixture
def full_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs, filled to the brim. Mounting needs root (CI has it); where mount is
    refused, the same refusal is provoked by asking for more headroom than the disk has."""
    mnt = tmp_path / "tmpfs"
    mnt.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mnt)],
        capture_output=True, check=False,
    ).returncode == 0  # fmt: skip
    if mounted:
        with (mnt / "filler").open("wb") as f:
            try:
                while True:
                    f.write(b"\xa5" * 65536)
                    f.flush()
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    try:
        yield mnt
    finally:
        if mounted:
            subprocess.run(["umount", str(mnt)], check=True)


def test_a_path_on_a_full_tmpfs_is_refused_as_an_error(full_tmpfs: Path) -> None:
    env = {"DISK_IO_PATH": str(full_tmpfs), "DISK_IO_SIZE_MB": "8"}
    if os.statvfs(full_tmpfs).f_bavail:  # not mounted: demand more room than the disk holds
        env["DISK_IO_MIN_FREE_MB"] = str(1 << 30)
    ran = run_runner("disk-io", env)
    assert_contract(ran)
    assert ran.exit_code == 3
    assert ran.marker.startswith("DISK_IO_ERROR: refused: writing 8 MiB to")
    assert "DISK_IO_MIN_FREE_MB" in ran.marker
    assert ran.parsed.metrics == {"diskIoPath": str(full_tmpfs)}  # nothing measured


def test_the_default_headroom_is_two_gibibytes(tmp_path: Path) -> None:
    mnt = tmp_path / "small"
    mnt.mkdir()
    assert (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)], check=False
        ).returncode
        == 0
    ), "mounting a tmpfs needs root"
    try:
        ran = run_runner("disk-io", {"DISK_IO_PATH": str(mnt), "DISK_IO_SIZE_MB": "1"})
        assert ran.exit_code == 3
        assert "under the 2048 MiB that must remain" in ran.marker
        ran = run_runner(
            "disk-io",
            {"DISK_IO_PATH": str(mnt), "DISK_IO_SIZE_MB": "8", "DISK_IO_MIN_FREE_MB": "0"},
        )
        assert_contract(ran)
        assert ran.exit_code == 0, ran.stdout  # O_DIRECT on tmpfs, measured
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_no_path_declared_is_a_declared_skip() -> None:
    ran = run_runner("disk-io", {})
    assert_contract(ran)
    assert ran.exit_code == 2
    assert ran.parsed.verdict.value == "Skip"
    assert not ran.parsed.undeclared_skip
    assert ran.marker == "DISK_IO_SKIP: no DISK_IO_PATH declared: nothing to measure"


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"DISK_IO_PATH": "scratch"}, "DISK_IO_PATH: 'scratch' is not an absolute path"),
        ({"DISK_IO_BLOCK_KB": "6"}, "DISK_IO_BLOCK_KB: 6 is not a multiple of 4 KiB"),
        ({"DISK_IO_SIZE_MB": "1GB"}, "DISK_IO_SIZE_MB: '1GB' is not a whole number"),
        ({"DISK_IO_SIZE_MB": "0"}, "DISK_IO_SIZE_MB: 0 is below the minimum 1"),
    ],
)
def test_malformed_configuration_is_an_error_naming_the_variable(
    tmp_path: Path, env: dict[str, str], says: str
) -> None:
    ran = run_runner("disk-io", {"DISK_IO_PATH": str(tmp_path), **env})
    assert_contract(ran)
    assert ran.exit_code == 3
    assert ran.marker.startswith(f"DISK_IO_ERROR: {says}")


def test_a_missing_directory_is_an_error_not_a_skip(tmp_path: Path) -> None:
    ran = run_runner("disk-io", {"DISK_IO_PATH": str(tmp_path / "not-mounted")})
    assert_contract(ran)
    assert ran.exit_code == 3
    assert "is not a directory" in ran.marker


def test_a_leftover_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    leftover = tmp_path / disk_io.FILE_NAME
    leftover.write_bytes(b"someone else's")
    ran = run_runner("disk-io", {"DISK_IO_PATH": str(tmp_path), "DISK_IO_SIZE_MB": "1"})
    assert_contract(ran)
    assert ran.exit_code == 3
    assert "already exists" in ran.marker
    assert leftover.read_bytes() == b"someone else's"


def test_sigterm_mid_write_is_an_error_and_the_file_is_removed(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        argv_of("disk-io"),
        env=runner_env({"DISK_IO_PATH": str(tmp_path), "DISK_IO_SIZE_MB": "20000",
                        "DISK_IO_MIN_FREE_MB": "0", "DISK_IO_BLOCK_KB": "4"}),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    first = proc.stdout.readline()  # diskIoPath=...: the write is about to start
    target = tmp_path / disk_io.FILE_NAME
    while not target.exists() and proc.poll() is None:
        time.sleep(0.01)
    time.sleep(0.2)  # well into the write
    proc.send_signal(signal.SIGTERM)
    rest, err = proc.communicate(timeout=60)
    ran = finish("disk-io", first + rest, err, proc.returncode)
    assert_contract(ran)
    assert ran.exit_code == 3, ran.stdout
    assert ran.marker == "DISK_IO_ERROR: terminated by signal SIGTERM before a verdict"
    assert not target.exists()


def test_a_device_error_is_a_fail_and_running_out_of_space_an_error() -> None:
    phase = disk_io.Phase()
    disk_io._io_error(OSError(errno.EIO, "Input/output error"), phase, "writing", 3 * disk_io.MIB)
    assert phase.device_error == "writing at 3 MiB: Input/output error"
    with pytest.raises(Stop) as stop:
        disk_io._io_error(OSError(errno.ENOSPC, "No space left"), disk_io.Phase(), "writing", 0)
    assert stop.value.outcome.exit_code == 3
    assert "ran out of space" in stop.value.outcome.reason


def test_p99_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert disk_io.nearest_rank(values, 99) == 99.0
    assert disk_io.nearest_rank([5.0], 99) == 5.0
