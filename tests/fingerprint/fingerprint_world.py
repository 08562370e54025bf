"""Node objects for fingerprint tests, shaped like what the API server returns."""

from __future__ import annotations

from copy import deepcopy
from datetime import UTC, datetime
from typing import Any

T0 = datetime(2026, 10, 1, tzinfo=UTC)

GB10_LABELS = {
    "kubernetes.io/hostname": "gpu-01",
    "kubernetes.io/arch": "arm64",
    "node.kubernetes.io/instance-type": "dgx-spark",
    "nvidia.com/gpu.product": "NVIDIA-GB10",
    "nvidia.com/gpu.count": "1",
    "nvidia.com/gpu.memory": "124546",
    "nvidia.com/gpu.family": "blackwell",
    "nvidia.com/gpu.compute-capability": "sm_121",
    "nvidia.com/cuda.driver.major": "580",
    "nvidia.com/cuda.driver.minor": "95",
    "nvidia.com/cuda.driver.rev": "05",
    "example.com/nic.enp1s0f0.role": "backend",
    "example.com/nic.enp1s0f0.link-layer": "Ethernet",
    "example.com/nic.enp1s0f0.speed-mbps": "200000",
    "example.com/nic.enp1s0f0.rdma-device": "rocep1s0f0",
    "topology.kubernetes.io/zone": "lab-a",
}


def node(
    name: str = "gpu-01",
    *,
    labels: dict[str, str] | None = None,
    kernel: str = "6.11.0-1016-nvidia",
    os_image: str = "Ubuntu 24.04.2 LTS",
    allocatable: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A Node object as a plain dict."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": deepcopy(GB10_LABELS if labels is None else labels)},
        "status": {
            "nodeInfo": {"kernelVersion": kernel, "osImage": os_image, "architecture": "arm64"},
            "allocatable": allocatable or {"cpu": "20", "memory": "119Gi"},
        },
    }
