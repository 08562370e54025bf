"""Runner image resolution (§2.16), one rule for every dispatcher.

In order: the explicit ``runner.image``; the ``imagesByVendor`` entry for the node's vendor; the
kind's built-in default, when that default serves any vendor, or the node's vendor is unknown
(``""``), or the vendors match. Anything else is an error naming what was found, so a mixed
fleet never runs an NVIDIA image on an AMD node and calls the crash a hardware fault.

The node's vendor comes from its fingerprint; ``unknown`` means the same as not knowing.
"""

from __future__ import annotations

from glimmer.api.test import BurnInTestSpec
from glimmer.contract.kinds import kind_spec
from glimmer.errors import GlimmerError
from glimmer.verdict.text import quote

UNKNOWN_VENDOR = "unknown"


class ImageError(GlimmerError):
    """No image can run this test on this node: the unit settles Error, the run goes on."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def normalize_vendor(vendor: str | None) -> str:
    """A fingerprint's vendor as the resolver reads it: ``unknown`` and nothing are ``""``."""
    if not vendor or vendor == UNKNOWN_VENDOR:
        return ""
    return vendor


def resolve_image(spec: BurnInTestSpec, node_vendor: str | None) -> str:
    """The image that runs ``spec`` on a node of ``node_vendor``. Raises ImageError."""
    vendor = normalize_vendor(node_vendor)
    runner = spec.runner
    if runner is not None and runner.image:
        return runner.image
    by_vendor = (runner.images_by_vendor if runner is not None else None) or []
    for entry in by_vendor:
        if vendor and entry.vendor == vendor:
            return entry.image
    row = kind_spec(spec.kind)
    if row is None or row.default_image is None:
        raise ImageError(
            f"no default runner image for kind {quote(spec.kind)} — set spec.runner.image"
        )
    if row.image_vendor is None or not vendor or row.image_vendor == vendor:
        return row.default_image
    listed = ", ".join(f"{e.vendor}={e.image}" for e in by_vendor) or "none"
    raise ImageError(
        f"no runner image for vendor {quote(vendor)}: kind {quote(spec.kind)}'s default image "
        f"{row.default_image} is for {row.image_vendor}, and spec.runner.imagesByVendor lists "
        f"{listed}; add an imagesByVendor entry for {vendor} or set spec.runner.image"
    )
