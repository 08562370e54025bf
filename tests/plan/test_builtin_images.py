"""The built-in tests that name an image name glimmer's own image of their kind at this release."""

from __future__ import annotations

from glimmer.contract.images import IMAGES, REGISTRY
from glimmer.plan.builtin import builtin_tests


def test_every_image_a_builtin_test_names_is_ours_for_its_kind_at_this_release() -> None:
    named = {
        name: (spec.kind, spec.runner.image)
        for name, spec in builtin_tests().items()
        if spec.runner is not None and spec.runner.image
    }
    # disk-io and fingerprint-probe have no default image (§9.14, §9.16): the host profile
    # names one, and a release that moves the version must move it too.
    assert {kind for kind, _ in named.values()} >= {"disk-io", "fingerprint-probe"}
    for name, (kind, image) in named.items():
        ours = [i.reference(kind) for i in IMAGES if kind in i.kinds]
        assert image.startswith(f"{REGISTRY}/"), f"{name}: {image} is not one of ours"
        assert image in ours, f"{name}: {image} is not {ours}"
