"""Where a runner looks at the host, each root overridable through a documented variable so
that a fixture tree can stand in for the real one in tests (and a container can be pointed at a
host mount).

* ``BURNIN_SYSFS_ROOT`` (``/sys``): host-health's AER counters, NICs and InfiniBand ports;
* ``BURNIN_PROC_ROOT`` (``/proc``): procfs, for runners that read it;
* ``BURNIN_KMSG_PATH`` (``/dev/kmsg``): host-health's kernel log, record by record;
* ``BURNIN_KERN_LOG_PATHS`` (``/var/log/kern.log:/var/log/messages:/var/log/syslog``): the
  text logs host-health reads when the kernel log device cannot be read;
* ``FINGERPRINT_PROBE_SYSFS`` (``/host/sys``): fingerprint-probe's read-only sysfs (§9.16).

A regular file at ``BURNIN_KMSG_PATH`` is read as lines in the ``/dev/kmsg`` record format,
which is how tests hand host-health a kernel log with an Xid line in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from glimmer.runners.settings import Settings

SYSFS_ROOT = "BURNIN_SYSFS_ROOT"
PROC_ROOT = "BURNIN_PROC_ROOT"
KMSG_PATH = "BURNIN_KMSG_PATH"
KERN_LOG_PATHS = "BURNIN_KERN_LOG_PATHS"
DEFAULT_KERN_LOGS = "/var/log/kern.log:/var/log/messages:/var/log/syslog"


@dataclass(frozen=True)
class HostPaths:
    sysfs: Path
    proc: Path
    kmsg: Path
    kern_logs: tuple[Path, ...]

    @classmethod
    def read(cls, settings: Settings) -> HostPaths:
        return cls(
            sysfs=settings.path(SYSFS_ROOT, "/sys"),
            proc=settings.path(PROC_ROOT, "/proc"),
            kmsg=settings.path(KMSG_PATH, "/dev/kmsg"),
            kern_logs=settings.paths(KERN_LOG_PATHS, DEFAULT_KERN_LOGS),
        )


def read_text(path: Path) -> str | None:
    """A small sysfs/procfs file, stripped; None when it cannot be read (the caller omits)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def read_int(path: Path) -> int | None:
    """A sysfs counter; None when unreadable or not a number (never a substitute 0)."""
    text = read_text(path)
    if text is None:
        return None
    try:
        return int(text, 0)
    except ValueError:
        return None
