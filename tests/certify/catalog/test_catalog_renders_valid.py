"""Every category × platform × GPU architecture renders a TrainingRuntime and a TrainJob, and
every rendered Trainer object validates against the Kubeflow Trainer CRD schemas."""

from __future__ import annotations

import pytest
from trainer_schemas import FILES, problems

from glimmer.certify.catalog.entries import list_entries
from glimmer.certify.catalog.gpu import architectures
from glimmer.certify.catalog.render import render_entry
from glimmer.certify.platform import names

ENTRIES = [e.ref for e in list_entries()]


@pytest.mark.parametrize("platform", names())
@pytest.mark.parametrize("ref", ENTRIES)
def test_every_category_renders_valid_trainer_objects_on_every_platform_and_gpu(
    ref: str, platform: str
) -> None:
    domain, variant = ref.split("/")
    for arch in architectures():
        objects = render_entry(domain, variant, platform, arch)
        kinds = [o["kind"] for o in objects]
        assert kinds.count("TrainingRuntime") == 1 and kinds[-1] == "TrainJob", (arch, kinds)
        for obj in objects:
            if obj["kind"] in FILES:
                assert problems(obj) == [], (arch, obj["kind"])


def test_the_catalog_has_every_required_category() -> None:
    assert set(ENTRIES) >= {
        "communication/nccl-all-reduce",
        "communication/nccl-all-gather",
        "communication/nccl-reduce-scatter",
        "communication/nccl-alltoall",
        "communication/nccl-sendrecv",
        "diagnostics/dcgm-level1",
        "diagnostics/dcgm-level2",
        "diagnostics/dcgm-level3",
        "diagnostics/dcgm-level4",
        "training/nemotron5-8b",
    }
    assert sorted(ENTRIES) == ENTRIES
