"""The identity of the machine glimmer runs on: kernel and OS from ``platform`` and
``/etc/os-release``, GPUs from NVML (else sysfs PCI devices), NICs and RDMA devices from
sysfs, and the CPU architecture as the ``kubernetes.io/arch`` label a Node would carry."""

from __future__ import annotations

import platform
import socket
from collections.abc import Callable
from pathlib import Path

from glimmer.fingerprint.identity import Gpu, Identity
from glimmer.fingerprint.labels import ARCH_LABEL, kubernetes_arch
from glimmer.fingerprint.nvml import nvml_gpus
from glimmer.fingerprint.sysfs import accelerators, network_interfaces

OS_RELEASE = Path("/etc/os-release")
SYSFS = Path("/sys")


def os_image(os_release: Path = OS_RELEASE) -> str:
    """``PRETTY_NAME`` of os-release (what a Node's ``nodeInfo.osImage`` shows), else the
    platform's own description."""
    try:
        lines = os_release.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "PRETTY_NAME":
            return value.strip().strip('"').strip("'")
    return platform.platform(terse=True)


def host_name() -> str:
    """This machine's name, as its Node would be called."""
    return socket.gethostname() or platform.node() or "localhost"


def capture_host(
    *,
    sysfs: Path = SYSFS,
    os_release: Path = OS_RELEASE,
    nvml: Callable[[], list[Gpu] | None] = nvml_gpus,
) -> Identity:
    """The identity of this host."""
    pci = accelerators(sysfs)
    named = nvml()
    # NVML names NVIDIA parts better than PCI ids; other vendors still come from sysfs.
    gpus = named + [g for g in pci if g.vendor != "nvidia"] if named else pci
    return Identity.of(
        os_image=os_image(os_release),
        kernel=platform.release(),
        labels={ARCH_LABEL: kubernetes_arch(platform.machine())},
        gpus=gpus,
        nics=network_interfaces(sysfs),
    )
