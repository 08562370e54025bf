"""Which node labels describe hardware identity (specs/burnin.md §7.2 step 3, Appendix B).

Kept: the CPU architecture and instance-type labels, and any label whose name part starts with a
hardware word (``gpu.``, ``nic.``, ``rdma-``, ``kernel-version.``...). Never kept, whatever
their name: labels of the ``burnin.glimmer.ai`` domain and any name carrying ``burnin`` as a
word, so the verdict labels that consumers of this operator write never read as drift.
"""

from __future__ import annotations

from collections.abc import Mapping

EXACT = frozenset(
    {
        "kubernetes.io/arch",
        "beta.kubernetes.io/arch",
        "node.kubernetes.io/instance-type",
        "beta.kubernetes.io/instance-type",
    }
)
PREFIXES = (
    "accelerator",
    "board.",
    "board-",
    "cpu.",
    "cpu-",
    "cuda.",
    "cuda-",
    "gpu.",
    "gpu-",
    "gpus.",
    "hw.",
    "hw-",
    "infiniband",
    "kernel-version.",
    "memory.",
    "memory-",
    "mig.",
    "mig-",
    "nic.",
    "nic-",
    "nvlink",
    "pci-",
    "rdma.",
    "rdma-",
    "rocm.",
    "rocm-",
    "system-os",
)
OPERATOR_DOMAIN = "burnin.glimmer.ai"
ARCH_LABEL = "kubernetes.io/arch"
# Python's platform.machine() -> the GOARCH spelling Kubernetes labels use.
_GOARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def split_key(key: str) -> tuple[str, str]:
    """``(domain, name)`` of a label key; the domain is "" when the key has no prefix."""
    domain, sep, name = key.rpartition("/")
    return (domain, name) if sep else ("", key)


def excluded(key: str) -> bool:
    """Operator and verdict labels: never part of a fingerprint."""
    domain, _ = split_key(key)
    lowered = key.lower()
    if domain == OPERATOR_DOMAIN or domain.endswith("." + OPERATOR_DOMAIN):
        return True
    return lowered.startswith("burnin") or "-burnin" in lowered or ".burnin" in lowered


def salient(key: str) -> bool:
    """Whether a label is part of the hardware identity."""
    if excluded(key):
        return False
    if key in EXACT:
        return True
    name = split_key(key)[1].lower()
    return name.startswith(PREFIXES)


def salient_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The hardware-identity subset of a node's labels."""
    return {k: v for k, v in labels.items() if salient(k)}


def kubernetes_arch(machine: str) -> str:
    """A CPU architecture in the ``kubernetes.io/arch`` spelling (unknown ones as given)."""
    return _GOARCH.get(machine.lower(), machine.lower())
