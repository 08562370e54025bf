"""The identity of a Kubernetes Node, given as the plain dict the API server returns
(specs/burnin.md §7.2 step 3).

GPUs come from labels (GPU Feature Discovery's ``nvidia.com/gpu.product``, ``gpu.count``,
``gpu.memory``...; the same shapes from other vendors' discovery), grouped by label domain; the
vendor is read from the domain. Without such labels the node's allocatable extended resources
say at least how many accelerators of which vendor it has. NICs come from
``<domain>/nic.<device>.<field>`` labels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from glimmer.fingerprint.identity import Gpu, Identity, Nic
from glimmer.fingerprint.keys import MAX_GPUS
from glimmer.fingerprint.labels import excluded, salient_labels, split_key
from glimmer.fingerprint.quantity import memory_bytes, whole
from glimmer.fingerprint.vendor import unattributed, vendor_of_domain

GPU_FIELDS = {
    **dict.fromkeys(("gpu.product", "gpu.model", "gpu.name", "gpu-product", "gpu-model"), "model"),
    **dict.fromkeys(("gpu.count", "gpu-count", "gpu.replicas"), "count"),
    **dict.fromkeys(("gpu.memory", "gpu-memory", "gpu.vram"), "memory"),
    **dict.fromkeys(
        (
            "gpu.arch",
            "gpu-arch",
            "gpu.architecture",
            "gpu.compute-capability",
            "cuda.compute-capability",
        ),
        "arch",
    ),
    **dict.fromkeys(("gpu.family", "gpu-family"), "family"),
    **dict.fromkeys(("gpu.vendor", "gpu-vendor"), "vendor"),
    **dict.fromkeys(
        ("gpu.driver-version", "gpu.driver", "gpu.driver.version", "cuda.driver-version"),
        "driver",
    ),
    **dict.fromkeys(("cuda.driver.major", "gpu.driver.major"), "major"),
    **dict.fromkeys(("cuda.driver.minor", "gpu.driver.minor"), "minor"),
    **dict.fromkeys(("cuda.driver.rev", "gpu.driver.rev"), "rev"),
}
ACCELERATOR_RESOURCES = frozenset(
    {"gpu", "gpu.shared", "i915", "i915_monitoring", "xe", "npu", "tpu", "accelerator"}
)
# Views of devices another resource already counts (time-slicing replicas, monitoring).
DERIVED_RESOURCES = frozenset({"gpu.shared", "i915_monitoring"})
ACCELERATOR_DOMAIN_HEADS = frozenset({"gpu", "accelerator", "npu", "tpu"})
NIC_FIELDS = {
    "role": "role",
    "pci-vendor": "pci_vendor",
    "pcivendor": "pci_vendor",
    "model": "model",
    "rdma-device": "rdma_device",
    "rdmadevice": "rdma_device",
    "link-layer": "link_layer",
    "linklayer": "link_layer",
    "speed-mbps": "speed_mbps",
    "speedmbps": "speed_mbps",
    "mtu": "mtu",
}

Facts = dict[str, str]


def _gpu_groups(labels: Mapping[str, str]) -> tuple[dict[str, Facts], Facts]:
    """GPU facts by vendor domain, and the facts no vendor domain claims."""
    groups: dict[str, Facts] = {}
    loose: Facts = {}
    for key in sorted(labels):
        if excluded(key):
            continue
        domain, name = split_key(key)
        field = GPU_FIELDS.get(name.lower())
        if field is None:
            continue
        target = loose if unattributed(domain) else groups.setdefault(domain.lower(), {})
        target.setdefault(field, labels[key].strip())
    return groups, loose


def _identified(facts: Facts) -> bool:
    return bool(facts.get("model") or facts.get("count"))


def _expand(vendor: str, facts: Facts) -> list[Gpu]:
    known = any(facts.get(f) for f in ("model", "arch", "family", "memory"))
    count = whole(facts.get("count", ""))
    if count is None or count > MAX_GPUS:
        # An unreadable count still means "a GPU" when the labels describe one.
        count = 1 if known else 0
    driver = facts.get("driver", "")
    if not driver and facts.get("major"):
        driver = ".".join(facts[p] for p in ("major", "minor", "rev") if facts.get(p))
    memory = memory_bytes(facts["memory"]) if facts.get("memory") else None
    gpu = Gpu(
        index=0,
        vendor=(facts.get("vendor") or vendor).lower(),
        model=facts.get("model", ""),
        arch=facts.get("arch") or facts.get("family", ""),
        memory_bytes=memory,
        driver_version=driver,
    )
    return [gpu] * count


def gpus_from_labels(labels: Mapping[str, str]) -> list[Gpu]:
    """GPUs the labels describe, indexed consecutively across vendors (sorted by vendor,
    model)."""
    groups, loose = _gpu_groups(labels)
    kept = {d: f for d, f in groups.items() if _identified(f)}
    found: list[Gpu] = []
    if kept:
        if len(kept) == 1:
            # One vendor: facts written under a neutral domain describe the same GPUs.
            ((domain, facts),) = kept.items()
            kept = {domain: {**loose, **facts}}
        for domain, facts in kept.items():
            found += _expand(vendor_of_domain(domain), facts)
    elif _identified(loose):
        found = _expand("", loose)
    found.sort(key=lambda g: (g.vendor, g.model))
    return _indexed(found)


def _indexed(gpus: list[Gpu]) -> list[Gpu]:
    return [replace(g, index=i) for i, g in enumerate(gpus[:MAX_GPUS])]


def gpus_from_allocatable(allocatable: Mapping[str, Any]) -> list[Gpu]:
    """Vendor-only GPUs from extended resources (``nvidia.com/gpu: 8``, ``amd.com/gpu``,
    ``gpu.intel.com/i915``). Several resources of one vendor describe the same devices, so a
    vendor counts its largest device resource, never their sum; a derived view (``gpu.shared``
    replicas, ``i915_monitoring``) counts only when the vendor offers nothing else."""
    primary: dict[str, int] = {}
    derived: dict[str, int] = {}
    for key, raw in allocatable.items():
        domain, name = split_key(key)
        if unattributed(domain):
            continue
        head = domain.lower().split(".")[0]
        if name.lower() not in ACCELERATOR_RESOURCES and head not in ACCELERATOR_DOMAIN_HEADS:
            continue
        count = whole(raw) if isinstance(raw, int | str) and not isinstance(raw, bool) else None
        if count is None or not 1 <= count <= MAX_GPUS:
            continue
        vendor = vendor_of_domain(domain)
        table = derived if name.lower() in DERIVED_RESOURCES else primary
        table[vendor] = max(table.get(vendor, 0), count)
    per_vendor = {**derived, **primary}
    return _indexed([Gpu(0, vendor=v) for v in sorted(per_vendor) for _ in range(per_vendor[v])])


def nics_from_labels(labels: Mapping[str, str]) -> list[Nic]:
    """NICs from ``…/nic.<device>.<field>`` labels, sorted by device."""
    devices: dict[str, dict[str, str]] = {}
    for key in sorted(labels):
        if excluded(key):
            continue
        name = split_key(key)[1]
        if not name.lower().startswith("nic."):
            continue
        device, dot, field = name[4:].rpartition(".")
        attr = NIC_FIELDS.get(field.lower())
        if not dot or not device or attr is None:
            continue
        devices.setdefault(device, {})[attr] = labels[key].strip()
    out = []
    for device in sorted(devices):
        facts = devices[device]
        out.append(
            Nic(
                name=device,
                role=facts.get("role", ""),
                pci_vendor=facts.get("pci_vendor", ""),
                model=facts.get("model", ""),
                rdma_device=facts.get("rdma_device", ""),
                link_layer=facts.get("link_layer", ""),
                speed_mbps=whole(facts.get("speed_mbps", "")),
                mtu=whole(facts.get("mtu", "")),
            )
        )
    return out


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def from_node(node: Mapping[str, Any]) -> Identity:
    """The identity of a Node object (``metadata.labels``, ``status.nodeInfo``,
    ``status.allocatable``); missing parts are simply unknown."""
    metadata = _mapping(node.get("metadata"))
    status = _mapping(node.get("status"))
    info = _mapping(status.get("nodeInfo"))
    labels = {str(k): str(v) for k, v in _mapping(metadata.get("labels")).items()}
    gpus = gpus_from_labels(labels) or gpus_from_allocatable(_mapping(status.get("allocatable")))
    return Identity.of(
        os_image=str(info.get("osImage") or ""),
        kernel=str(info.get("kernelVersion") or ""),
        labels=salient_labels(labels),
        gpus=gpus,
        nics=nics_from_labels(labels),
    )


def node_name(node: Mapping[str, Any]) -> str:
    """``metadata.name`` of a Node object ("" when missing)."""
    return str(_mapping(node.get("metadata")).get("name") or "")
