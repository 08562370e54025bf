"""An image is resolved only where the substrate runs images (:class:`ImageFree`): a kind with no
default image and none given is an Error attempt on a substrate that pulls images, and simply
runs on one that runs the runner installed on the host."""

from __future__ import annotations

from typing import Any

from engine_world import run_object, spec_of, world

from glimmer.backends.sim.backend import SimBackend
from glimmer.contract.vocab import Phase
from glimmer.engine.backend import ExecutionSpec

NO_IMAGE = {"disk": spec_of("disk-io", durationSeconds=60)}  # disk-io has no default image
ENTRIES = [{"testRef": "disk"}]


class Recording(SimBackend):
    """The simulator, keeping the image of every execution it was asked to create."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.images: list[str] = []

    def create_execution(self, spec: ExecutionSpec) -> None:
        self.images.append(spec.image)
        super().create_execution(spec)


class HostRunner(Recording):
    """The simulator, saying what the local backend's processes say: no image is run."""

    runs_images = False


def _result(backend_cls: type[Recording]) -> tuple[Phase, str, list[str]]:
    w = world(1, NO_IMAGE, ENTRIES, backend_cls=backend_cls)
    w.submit(run_object(targets=list(w.backend.nodes)))
    final = w.drive().run
    assert final.status is not None
    [result] = final.status.results or []
    assert isinstance(w.backend, Recording)
    return result.phase, result.message or "", w.backend.images


def test_a_substrate_that_runs_images_errors_a_test_with_none() -> None:
    phase, message, images = _result(Recording)
    assert phase is Phase.ERROR and "no default runner image" in message and images == []


def test_a_substrate_that_runs_no_image_starts_the_test_without_one() -> None:
    phase, message, images = _result(HostRunner)
    assert phase is Phase.PASSED, message
    assert images == [""]
