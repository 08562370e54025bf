"""Image resolution (§2.16) — scenario 36 at the plan level."""

from __future__ import annotations

import pytest
from plan_builders import spec

from glimmer.contract.kinds import kind_spec
from glimmer.plan.images import ImageError, normalize_vendor, resolve_image

BY_VENDOR = {"imagesByVendor": [{"vendor": "amd", "image": "example.com/burn-rocm:1"}]}


def _default(kind: str) -> str:
    row = kind_spec(kind)
    assert row is not None and row.default_image is not None
    return row.default_image


def test_an_explicit_image_wins_over_everything() -> None:
    pinned = spec("gpu-burn", runner={"image": "example.com/mine:2", **BY_VENDOR})
    assert resolve_image(pinned, "amd") == "example.com/mine:2"


def test_images_by_vendor_picks_the_nodes_vendor() -> None:
    assert resolve_image(spec("gpu-burn", runner=BY_VENDOR), "amd") == "example.com/burn-rocm:1"


@pytest.mark.parametrize("vendor", ["nvidia", "", None, "unknown"])
def test_default_image_serves_its_vendor_and_unknown_vendors(vendor: str | None) -> None:
    assert resolve_image(spec("gpu-burn", runner=BY_VENDOR), vendor) == _default("gpu-burn")


def test_a_vendor_any_default_serves_every_vendor() -> None:
    assert resolve_image(spec("ib-write-bw", scope="Pair"), "intel") == _default("ib-write-bw")


def test_a_vendor_mismatch_is_an_error_naming_the_vendor_and_the_entries() -> None:
    with pytest.raises(ImageError) as caught:
        resolve_image(spec("gpu-burn", runner=BY_VENDOR), "tenstorrent")
    message = caught.value.message
    assert 'no runner image for vendor "tenstorrent"' in message
    assert "amd=example.com/burn-rocm:1" in message
    with pytest.raises(ImageError) as bare:
        resolve_image(spec("gpu-burn"), "amd")
    assert "imagesByVendor lists none" in bare.value.message


@pytest.mark.parametrize("kind", ["tcp-baseline", "disk-io", "custom", "somebody-elses"])
def test_a_kind_without_default_image_names_the_kind(kind: str) -> None:
    with pytest.raises(ImageError) as caught:
        resolve_image(spec(kind), "nvidia")
    assert caught.value.message == (
        f'no default runner image for kind "{kind}" — set spec.runner.image'
    )


def test_unknown_vendor_reads_as_not_known() -> None:
    assert normalize_vendor("unknown") == normalize_vendor(None) == ""
    assert normalize_vendor("amd") == "amd"
