"""Accelerator vendors from the places they show: a label or resource domain (``nvidia.com``),
and a PCI vendor id."""

from __future__ import annotations

# Domains Kubernetes and glimmer itself own: a GPU label there names no vendor.
_UNATTRIBUTED = ("kubernetes.io", "k8s.io", "glimmer.ai")

PCI_VENDORS = {
    "0x10de": "nvidia",
    "0x1002": "amd",
    "0x8086": "intel",
    "0x1da3": "habana",
    "0x1e52": "tenstorrent",
}


def unattributed(domain: str) -> bool:
    """An empty domain, or one under kubernetes.io / k8s.io / glimmer.ai."""
    return not domain or any(domain == d or domain.endswith("." + d) for d in _UNATTRIBUTED)


def vendor_of_domain(domain: str) -> str:
    """``nvidia.com`` -> nvidia, ``gpu.intel.com`` -> intel, ``amd.com`` -> amd: the first of
    the domain's last two labels; "" for an unattributed domain."""
    if unattributed(domain):
        return ""
    parts = [p for p in domain.lower().split(".") if p]
    return parts[-2] if len(parts) >= 2 else parts[0]
