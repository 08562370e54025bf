"""BurnInTest (``bit``): one reusable measurement definition, and the spec parts it is made of.

``BurnInTestSpec`` is also what a profile's ``inline`` entry and a pinned plan carry.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from glimmer.api.base import ZERO, Bool, Int32, Int64, Wire, item_error
from glimmer.api.k8s import EnvVar, Passthrough, ResourceRequirements
from glimmer.api.meta import Resource
from glimmer.api.threshold import Threshold
from glimmer.contract.vocab import Scope

# The accelerator vendors a runner image can be chosen by (equal to contract ACCELERATOR_VENDORS).
Vendor = Literal["amd", "habana", "intel", "nvidia", "tenstorrent"]

# Assert-only host path types: the "...OrCreate" types are left out on purpose, so that a test
# sent to measure a node can never create anything on it.
HostPathType = Literal["Directory", "File", "Socket", "CharDevice", "BlockDevice"]

ABSOLUTE_PATH = r"^/"
MIN_SEGMENT_SECONDS = 300


class SoakSpec(Wire):
    """Segmentation of a long soak into pods of ``segmentSeconds`` each."""

    segment_seconds: Int32 = Field(ge=MIN_SEGMENT_SECONDS)
    abort_early: Bool = False


class VendorImage(Wire):
    """The runner image for nodes of one accelerator vendor."""

    vendor: Vendor
    image: str = Field(min_length=1)


def _absolute(path: str) -> str:
    """``path`` normalised (``//``, ``/./`` and a trailing ``/`` dropped), so ``/dev/`` and
    ``/dev`` are one mount and ``//`` is ``/``; a ``..`` segment is refused rather than
    resolved: ``/dev/../etc`` names /etc while reading as /dev, and nobody reviewing a test
    should have to work out which folder of the node it reaches."""
    if not path.startswith("/"):
        raise ValueError(f"{path!r} is not an absolute path (it must start with /)")
    segments = [s for s in path.split("/") if s not in ("", ".")]
    if ".." in segments:
        raise ValueError(
            f"{path!r} climbs with '..'; write the folder it means without it "
            "(a host path is named as it is, never worked out)"
        )
    return "/" + "/".join(segments)


class HostPathMount(Wire):
    """The only way a runner reaches the node's filesystem. Read-only unless it says otherwise."""

    path: str = Field(min_length=1, json_schema_extra={"pattern": ABSOLUTE_PATH})
    mount_path: str = Field(min_length=1, json_schema_extra={"pattern": ABSOLUTE_PATH})
    read_only: Bool = True
    type: HostPathType | None = None

    _absolute_paths = field_validator("path", "mount_path")(_absolute)


class RunnerSpec(Wire):
    """Image, command, environment and host access of the runner container."""

    image: str | None = None
    images_by_vendor: list[VendorImage] | None = Field(
        None,
        max_length=8,
        json_schema_extra={
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["vendor"],
        },
    )
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    privileged: Bool = Field(False, json_schema_extra=ZERO)
    run_as_user: Int64 | None = None
    priority_class_name: str | None = None
    host_paths: list[HostPathMount] | None = Field(
        None,
        json_schema_extra={
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["mountPath"],
        },
    )
    readiness_probe: Passthrough | None = None

    @field_validator("images_by_vendor")
    @classmethod
    def _one_image_per_vendor(cls, images: list[VendorImage] | None) -> list[VendorImage] | None:
        seen: dict[str, int] = {}
        for i, item in enumerate(images or ()):
            if item.vendor in seen:
                raise item_error(
                    f"[{i}].vendor",
                    f"vendor {item.vendor!r} already has an image (entry {seen[item.vendor]})",
                )
            seen[item.vendor] = i
        return images

    @field_validator("host_paths")
    @classmethod
    def _unique_mount_paths(cls, mounts: list[HostPathMount] | None) -> list[HostPathMount] | None:
        seen: dict[str, int] = {}
        for i, mount in enumerate(mounts or ()):
            if mount.mount_path in seen:
                raise item_error(
                    f"[{i}].mountPath",
                    f"mountPath {mount.mount_path!r} is already mounted by entry "
                    f"{seen[mount.mount_path]}",
                )
            seen[mount.mount_path] = i
        return mounts


class BurnInTestSpec(Wire):
    """What to run, where, for how long, and the gates its metrics must meet."""

    kind: str
    scope: Scope = Scope.NODE
    # 0 means "the kind's default" (600 s in the operator).
    duration_seconds: Int32 = Field(0, ge=0, json_schema_extra=ZERO)
    repeat_count: Int32 = Field(1, ge=1)
    checkpoint_interval_seconds: Int32 | None = Field(None, ge=0)
    soak: SoakSpec | None = None
    runner: RunnerSpec | None = None
    thresholds: list[Threshold] | None = None
    resources: ResourceRequirements | None = None
    host_network: Bool = Field(False, json_schema_extra=ZERO)


class BurnInTestStatus(Wire):
    """Status of a BurnInTest (declared; the controller does not write it)."""

    observed_generation: Int64 | None = None


class BurnInTest(Resource):
    """A reusable measurement definition."""

    KIND: ClassVar[str] = "BurnInTest"
    SHORT_NAME: ClassVar[str] = "bit"
    PLURAL: ClassVar[str] = "burnintests"

    spec: BurnInTestSpec
    status: BurnInTestStatus | None = None
