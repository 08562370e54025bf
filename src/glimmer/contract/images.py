"""glimmer's own runner images: where they are published, which kinds each serves, and the tag
that runs each kind.

Two images (deploy/images/): ``glimmer-runner`` for the vendor-free kinds and
``glimmer-runner-cuda`` for the NVIDIA ones. Each is built once per kind it serves, a stage per
kind whose entrypoint is ``python3 -m glimmer.runners.cli <kind>``, and tagged
``<release>-<kind>``: so an image names its kind by itself and the pod of §2.16 (or the §8.2
container command line) needs no command or argument to run it, and a test's own ``command``
replaces the entrypoint and its ``args`` follow the kind, as ``glimmer-runner <kind> [args]``
does as a plain process. ``<release>`` is this glimmer's version, read from the installed
package's metadata (pyproject.toml is the one place it is written), so a release runs the
runners it was released with.

``python -m glimmer.contract.images`` prints ``<containerfile> <kind> <reference>`` for every
tag, the list deploy/images/build.sh builds and a site mirrors.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

REGISTRY = "ghcr.io/glimmer-ai"
ENTRYPOINT = ("python3", "-m", "glimmer.runners.cli")  # the kind follows it
UNRELEASED = "0.0.0+unknown"  # a source tree that was never installed (the runner images)
_NOT_IN_TAG = re.compile(r"[^A-Za-z0-9_.-]")


def release() -> str:
    """This glimmer's version, as the package metadata states it."""
    try:
        return version("glimmer")
    except PackageNotFoundError:
        return UNRELEASED


RELEASE = release()  # read once: image resolution runs per test and node


def tag(kind: str, of_release: str | None = None) -> str:
    """``<release>-<kind>``; a PEP 440 local version's ``+`` (not allowed in a tag) as ``-``."""
    return _NOT_IN_TAG.sub("-", f"{of_release or RELEASE}-{kind}")


@dataclass(frozen=True)
class RunnerImage:
    """One of glimmer's runner images: its repository under :data:`REGISTRY`, the
    Containerfile it is built from, the vendor whose devices it drives (None: any, it drives
    none) and the kinds it has a stage for."""

    repository: str
    containerfile: str
    vendor: str | None
    kinds: tuple[str, ...]

    def reference(self, kind: str, of_release: str | None = None) -> str:
        """The image that runs ``kind``."""
        if kind not in self.kinds:
            raise ValueError(f"{self.repository} has no stage for kind {kind!r}")
        return f"{REGISTRY}/{self.repository}:{tag(kind, of_release)}"


RUNNER = RunnerImage(
    "glimmer-runner",
    "runner.Containerfile",
    None,
    (
        "host-health",
        "memory-stress",
        "disk-io",
        "fingerprint-probe",
        "tcp-baseline",
        "ib-write-bw",
        "fabric-soak",
    ),
)
CUDA = RunnerImage(
    "glimmer-runner-cuda",
    "cuda.Containerfile",
    "nvidia",
    (
        "clockprobe",
        "thermal-soak",
        "gpu-burn",
        "gemm-sweep",
        "compute-smoke",
        "memory-bw",
        "nccl",
        "host-health",
        "dcgm-diag",
        "gpudirect-rdma",
    ),
)
IMAGES = (RUNNER, CUDA)


def every_tag(of_release: str | None = None) -> list[tuple[RunnerImage, str, str]]:
    """(image, kind, reference) of every per-kind tag, in the images' order."""
    return [(i, k, i.reference(k, of_release)) for i in IMAGES for k in i.kinds]


def main() -> int:
    for image, kind, reference in every_tag():
        print(image.containerfile, kind, reference)
    return 0


if __name__ == "__main__":
    sys.exit(main())
