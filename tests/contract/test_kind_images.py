"""The kinds' default images are glimmer's own two runner images at this glimmer's version
(contract/images.py): the NVIDIA kinds get the CUDA image, the vendor-free ones the other, and
each reference names a kind the image has a stage for."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest

from glimmer import __version__
from glimmer.contract.images import CUDA, IMAGES, REGISTRY, RUNNER, RunnerImage, tag
from glimmer.contract.kinds import BUILT_IN, KindSpec

ROOT = Path(__file__).resolve().parents[2]
WITH_DEFAULT = [k for k in BUILT_IN.values() if k.default_image is not None]
# What an OCI tag may hold (distribution spec).
TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
ACCELERATOR_KINDS = {
    "clockprobe", "thermal-soak", "gpu-burn", "gemm-sweep", "compute-smoke", "memory-bw", "nccl",
}  # fmt: skip


def _image_of(reference: str) -> RunnerImage:
    (image,) = [i for i in IMAGES if reference.startswith(f"{REGISTRY}/{i.repository}:")]
    return image


@pytest.mark.parametrize("kind", WITH_DEFAULT, ids=lambda k: k.name)
def test_the_default_image_of_every_kind_is_one_of_ours_at_our_version(kind: KindSpec) -> None:
    assert kind.default_image is not None
    image = _image_of(kind.default_image)
    assert kind.default_image == f"{REGISTRY}/{image.repository}:{__version__}-{kind.name}"
    assert kind.name in image.kinds


def test_only_the_four_kinds_whose_image_the_site_names_have_no_default() -> None:
    # §9.13-9.16: the site names their image; every other kind kept its default, now ours.
    assert {k.name for k in BUILT_IN.values() if k.default_image is None} == {
        "tcp-baseline",
        "disk-io",
        "fabric-soak",
        "fingerprint-probe",
    }


def test_the_cuda_kinds_get_the_cuda_image_and_the_vendor_free_ones_the_other() -> None:
    for kind in WITH_DEFAULT:
        assert kind.image is (CUDA if kind.image_vendor == "nvidia" else RUNNER), kind.name
    for name in ACCELERATOR_KINDS:
        assert BUILT_IN[name].image is CUDA and BUILT_IN[name].image_vendor == "nvidia"
    for name in ("ib-write-bw", "memory-stress"):
        assert BUILT_IN[name].image is RUNNER and BUILT_IN[name].image_vendor is None


def test_the_release_is_the_installed_packages_version() -> None:
    assert tag("nccl") == f"{version('glimmer')}-nccl"


def test_a_local_version_becomes_a_valid_tag() -> None:
    made = tag("gemm-sweep", "0.2.0.dev3+g1a2b3c")
    assert made == "0.2.0.dev3-g1a2b3c-gemm-sweep" and TAG.fullmatch(made)


def test_an_image_refuses_a_kind_it_has_no_stage_for() -> None:
    with pytest.raises(ValueError, match="glimmer-runner has no stage for kind 'gpu-burn'"):
        RUNNER.reference("gpu-burn")


@pytest.mark.parametrize(
    "path",
    [
        "src/glimmer/contract/images.py",
        "src/glimmer/contract/kinds.py",
        "deploy/images/runner.Containerfile",
        "deploy/images/cuda.Containerfile",
        "deploy/images/build.sh",
    ],
)
def test_the_version_is_written_in_pyproject_alone(path: str) -> None:
    assert f'version = "{__version__}"' in (ROOT / "pyproject.toml").read_text()
    assert __version__ not in (ROOT / path).read_text()
