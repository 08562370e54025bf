"""Identity from Kubernetes Node objects (§7.2 step 3): salient labels, GPUs from labels with
the vendor from the label domain, allocatable resources when unlabelled, NICs from labels."""

from __future__ import annotations

import pytest
from fingerprint_world import GB10_LABELS, node

from glimmer.fingerprint.identity import Gpu, Nic
from glimmer.fingerprint.labels import salient, salient_labels
from glimmer.fingerprint.node_object import (
    from_node,
    gpus_from_allocatable,
    gpus_from_labels,
    nics_from_labels,
)
from glimmer.fingerprint.quantity import memory_bytes, quantity
from glimmer.fingerprint.vendor import vendor_of_domain


def test_a_gb10_node_is_captured_whole() -> None:
    ident = from_node(node())
    assert ident.kernel == "6.11.0-1016-nvidia" and ident.os_image == "Ubuntu 24.04.2 LTS"
    assert ident.gpus == (
        Gpu(
            index=0,
            vendor="nvidia",
            model="NVIDIA-GB10",
            arch="sm_121",
            memory_bytes=124546 * 2**20,
            driver_version="580.95.05",
        ),
    )
    assert ident.nics == (
        Nic(
            name="enp1s0f0",
            role="backend",
            rdma_device="rocep1s0f0",
            link_layer="Ethernet",
            speed_mbps=200000,
        ),
    )
    labels = dict(ident.labels)
    assert "kubernetes.io/hostname" not in labels and "topology.kubernetes.io/zone" not in labels
    assert labels["kubernetes.io/arch"] == "arm64"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-GB10"
    assert labels["example.com/nic.enp1s0f0.role"] == "backend"


@pytest.mark.parametrize(
    ("key", "kept"),
    [
        ("kubernetes.io/arch", True),
        ("beta.kubernetes.io/instance-type", True),
        ("nvidia.com/gpu.product", True),
        ("feature.node.kubernetes.io/cpu-model.vendor_id", True),
        ("feature.node.kubernetes.io/kernel-version.full", True),
        ("feature.node.kubernetes.io/rdma.available", True),
        ("accelerator", True),
        ("nvidia.com/mig.strategy", True),
        ("kubernetes.io/hostname", False),
        ("topology.kubernetes.io/zone", False),
        ("burnin.glimmer.ai/last-verdict", False),
        ("burnin.glimmer.ai/gpu.count", False),
        ("x.burnin.glimmer.ai/gpu-model", False),
        ("example.com/gpu-burnin-verdict", False),
        ("acme.burnin.io/gpu.product", False),
        ("burnin-state", False),
    ],
)
def test_salient_labels(key: str, kept: bool) -> None:
    assert salient(key) is kept


def test_salient_subset_keeps_values() -> None:
    assert salient_labels({"nvidia.com/gpu.count": "8", "team": "ml"}) == {
        "nvidia.com/gpu.count": "8"
    }


@pytest.mark.parametrize(
    ("domain", "vendor"),
    [
        ("nvidia.com", "nvidia"),
        ("gpu.intel.com", "intel"),
        ("amd.com", "amd"),
        ("habana.ai", "habana"),
        ("kubernetes.io", ""),
        ("feature.node.kubernetes.io", ""),
        ("glimmer.ai", ""),
        ("", ""),
    ],
)
def test_vendor_comes_from_the_label_domain(domain: str, vendor: str) -> None:
    assert vendor_of_domain(domain) == vendor


def test_gpu_count_expands_and_indices_run_across_vendors_sorted() -> None:
    gpus = gpus_from_labels(
        {
            "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
            "nvidia.com/gpu.count": "2",
            "amd.com/gpu.product": "MI300X",
            "amd.com/gpu.count": "1",
            "amd.com/gpu.memory": "192Gi",
        }
    )
    assert [(g.index, g.vendor, g.model) for g in gpus] == [
        (0, "amd", "MI300X"),
        (1, "nvidia", "NVIDIA-H100-80GB-HBM3"),
        (2, "nvidia", "NVIDIA-H100-80GB-HBM3"),
    ]
    assert gpus[0].memory_bytes == 192 * 2**30


def test_unattributed_facts_fill_a_single_vendor_group() -> None:
    gpus = gpus_from_labels(
        {"nvidia.com/gpu.product": "NVIDIA-L40S", "glimmer.ai/gpu-arch": "sm_89", "gpu-count": "2"}
    )
    assert [(g.vendor, g.arch) for g in gpus] == [("nvidia", "sm_89")] * 2


def test_unattributed_group_alone_has_no_vendor() -> None:
    gpus = gpus_from_labels({"glimmer.ai/gpu-model": "h100_sxm_80gb"})
    assert gpus == [Gpu(0, vendor="", model="h100_sxm_80gb")]


@pytest.mark.parametrize(("count", "expected"), [("0", 0), ("64", 64), ("65", 1), ("two", 1)])
def test_count_must_be_0_to_64_else_one_when_the_gpu_is_described(
    count: str, expected: int
) -> None:
    gpus = gpus_from_labels({"nvidia.com/gpu.product": "X", "nvidia.com/gpu.count": count})
    assert len(gpus) == expected


def test_arch_falls_back_to_family_and_driver_may_be_explicit() -> None:
    (gpu,) = gpus_from_labels(
        {
            "nvidia.com/gpu.product": "X",
            "nvidia.com/gpu.family": "hopper",
            "nvidia.com/gpu.driver-version": "570.1",
        }
    )
    assert (gpu.arch, gpu.driver_version) == ("hopper", "570.1")


def test_unlabelled_node_falls_back_to_allocatable_resources() -> None:
    bare = node(
        labels={"kubernetes.io/arch": "amd64"},
        allocatable={"cpu": "64", "nvidia.com/gpu": "8", "nvidia.com/gpu.shared": "32"},
    )
    ident = from_node(bare)
    assert [(g.index, g.vendor, g.model) for g in ident.gpus] == [
        (i, "nvidia", "") for i in range(8)
    ]


@pytest.mark.parametrize(
    ("allocatable", "expected"),
    [
        ({"amd.com/gpu": 4}, ["amd"] * 4),
        ({"gpu.intel.com/i915": "2", "gpu.intel.com/i915_monitoring": "1"}, ["intel"] * 2),
        ({"habana.ai/gaudi": "8"}, []),  # not an accelerator resource name
        ({"example.com/gpu": "65"}, []),  # more than 64: not believable
        ({"example.com/gpu": "0"}, []),
        ({"kubernetes.io/gpu": "1"}, []),
        ({"nvidia.com/gpu": True}, []),
    ],
)
def test_allocatable_vendors(allocatable: dict[str, object], expected: list[str]) -> None:
    assert [g.vendor for g in gpus_from_allocatable(allocatable)] == expected


def test_nics_from_labels_merge_fields_per_device_sorted() -> None:
    nics = nics_from_labels(
        {
            "example.com/nic.ib1.mtu": "4096",
            "example.com/nic.ib0.linklayer": "InfiniBand",
            "example.com/nic.ib0.speedmbps": "400000",
            "example.com/nic.ib0.pci-vendor": "0x15b3",
            "example.com/nic.ib0.colour": "blue",
            "burnin.glimmer.ai/nic.ib9.role": "backend",
        }
    )
    assert nics == [
        Nic("ib0", pci_vendor="0x15b3", link_layer="InfiniBand", speed_mbps=400000),
        Nic("ib1", mtu=4096),
    ]


def test_at_most_64_gpus() -> None:
    gpus = gpus_from_labels(
        {
            "nvidia.com/gpu.product": "A",
            "nvidia.com/gpu.count": "64",
            "amd.com/gpu.product": "B",
            "amd.com/gpu.count": "64",
        }
    )
    assert len(gpus) == 64


def test_quantities() -> None:
    assert quantity("80Gi") == 80 * 2**30
    assert quantity("1.5k") == 1500
    assert quantity("1e3") == 1000
    assert quantity("lots") is None
    assert memory_bytes("81559") == 81559 * 2**20
    assert memory_bytes("80G") == 80 * 10**9


def test_a_node_with_missing_parts_is_simply_unknown() -> None:
    ident = from_node({"metadata": {"name": "x"}})
    assert (ident.kernel, ident.os_image, ident.gpus, ident.nics, ident.labels) == (
        "",
        "",
        (),
        (),
        (),
    )
    assert dict(from_node(node()).labels).keys() <= GB10_LABELS.keys()
