"""Scanning the kernel log for driver faults (NVIDIA Xid, amdgpu resets) and hardware errors
(machine checks, EDAC, GHES), before and during host-health's observation window.

The source is ``/dev/kmsg`` (record by record, non-blocking), else the first readable text log
of ``BURNIN_KERN_LOG_PATHS``. A first drain counts what this boot already logged (the
pre-existing figures); a second drain after the window counts what is new. A record lost under
the reader (``EPIPE`` from ``/dev/kmsg``, a text log rotated or truncated mid-window) marks the
scan dropped, and host-health then omits the counts rather than report a partial zero.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

# "NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus."
XID = re.compile(r"NVRM: Xid \((?:PCI:)?[^)]*\): (\d+)")
# amdgpu's counterpart of an Xid: the driver resetting the GPU, or an uncorrectable RAS event.
AMDGPU_FAULT = re.compile(r"amdgpu [^:]*: (?:.*GPU reset begin|.*uncorrectable hardware error)")
HW_ERROR = re.compile(
    r"\[Hardware Error\]|Machine check events logged|mce: .*Hardware Error|EDAC MC\d+: \d+ UE"
)
# A text log spans boots; counting starts again at the kernel's first line of each boot.
BOOT = re.compile(r"\bLinux version \d")
TEXT_LOG_TAIL = 64 * 1024 * 1024  # a huge syslog is read from its last 64 MiB only
KMSG_READ = 16384  # larger than any one record (the kernel's limit is 8 KiB)


@dataclass
class Scan:
    xids: int = 0
    hw_errors: int = 0
    last_xid: int | None = None
    dropped: bool = False

    def add_line(self, line: str) -> None:
        found = XID.search(line)
        if found:
            self.xids += 1
            self.last_xid = int(found.group(1))
        elif AMDGPU_FAULT.search(line):
            self.xids += 1
        if HW_ERROR.search(line):
            self.hw_errors += 1


class KernelLog:
    """A source read in drains: each drain returns what appeared since the previous one."""

    source = ""
    where = ""

    def drain(self, count_boots: bool = False) -> Scan:
        raise NotImplementedError

    def close(self) -> None:
        pass


class KmsgDevice(KernelLog):
    source = "kmsg"

    def __init__(self, path: Path) -> None:
        self.where = str(path)
        self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)

    def drain(self, count_boots: bool = False) -> Scan:
        scan = Scan()
        while True:
            try:
                record = os.read(self._fd, KMSG_READ)
            except BlockingIOError:
                return scan
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # records overwritten before we read them
                    scan.dropped = True
                    continue
                raise
            if not record:
                return scan
            text = record.decode("utf-8", "replace")
            scan.add_line(text.split(";", 1)[-1])  # "pri,seq,usec,flags;message"

    def close(self) -> None:
        os.close(self._fd)


class TextLog(KernelLog):
    """A growing text file read from a remembered offset (also a kmsg-format fixture file)."""

    def __init__(self, path: Path, source: str) -> None:
        self.where = str(path)
        self.source = source
        self._path = path
        size = path.stat().st_size
        self._offset = max(0, size - TEXT_LOG_TAIL)

    def drain(self, count_boots: bool = False) -> Scan:
        scan = Scan()
        try:
            size = self._path.stat().st_size
            if size < self._offset:  # rotated or truncated under us
                scan.dropped = True
                self._offset = 0
            with self._path.open("rb") as f:
                f.seek(self._offset)
                data = f.read()
        except OSError:
            scan.dropped = True
            return scan
        # Only whole lines; a line still being written is read on the next drain.
        end = data.rfind(b"\n") + 1
        self._offset += end
        for raw in data[:end].decode("utf-8", "replace").splitlines():
            if count_boots and BOOT.search(raw):
                scan = Scan(dropped=scan.dropped)
                continue
            scan.add_line(raw)
        return scan


def open_kernel_log(kmsg: Path, text_logs: tuple[Path, ...]) -> tuple[KernelLog | None, str]:
    """The source to scan and, when there is none, why (for ``xidSourceDetail``)."""
    why = []
    try:
        mode = os.stat(kmsg).st_mode
    except OSError as exc:
        why.append(f"{kmsg}: {exc.strerror}")
    else:
        try:
            if stat.S_ISCHR(mode):
                log: KernelLog = KmsgDevice(kmsg)
                log.drain()  # a dmesg_restrict refusal shows on the first read, not the open
                log.close()
                return KmsgDevice(kmsg), ""
            if stat.S_ISREG(mode):
                return TextLog(kmsg, "kmsg"), ""
            why.append(f"{kmsg} is neither a character device nor a file")
        except OSError as exc:
            why.append(
                f"{kmsg}: {exc.strerror} (needs uid 0, or CAP_SYSLOG where "
                "kernel.dmesg_restrict=1; in a container mount it and run privileged as root)"
            )
    for path in text_logs:
        try:
            if path.is_file() and os.access(path, os.R_OK):
                return TextLog(path, "kernlog"), ""
        except OSError:
            pass
    why.append("no readable text log in " + ":".join(str(p) for p in text_logs))
    return None, "; ".join(why)
