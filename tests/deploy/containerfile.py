"""Reading deploy/images/*.Containerfile without building them: instructions, labels, stages,
and what a stage's container runs (its entrypoint, inherited from the stage it is built FROM)
and as whom. Also which stage an image reference of glimmer's was built from, so a test can
say what a rendered pod or container command line would run."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from glimmer.contract.images import IMAGES, RunnerImage

ROOT = Path(__file__).resolve().parents[2]
IMAGES_DIR = ROOT / "deploy" / "images"


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in file order: comments dropped, continuation lines joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        word, _, rest = whole.partition(" ")
        out.append((word.upper(), rest.strip()))
    assert not pending, f"{path.name} ends inside a continued line"
    return out


def labels(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for word, rest in instructions(path):
        if word == "LABEL":
            for pair in shlex.split(rest):
                key, _, value = pair.partition("=")
                found[key] = value
    return found


@dataclass
class Stage:
    name: str
    parent: str  # the FROM argument: another stage's name or an external image
    body: list[tuple[str, str]] = field(default_factory=list)


def stages(path: Path) -> dict[str, Stage]:
    """The build stages by name, in file order (an unnamed stage is named by its index)."""
    found: dict[str, Stage] = {}
    current: Stage | None = None
    for word, rest in instructions(path):
        if word == "FROM":
            words = [w for w in rest.split() if not w.startswith("--")]
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else str(len(found))
            current = found[name] = Stage(name, words[0])
        elif current is not None:
            current.body.append((word, rest))
    return found


def _chain(path: Path, stage: str) -> list[Stage]:
    """``stage`` and the stages it is built from, nearest first."""
    table = stages(path)
    out = [table[stage]]
    while out[-1].parent in table:
        out.append(table[out[-1].parent])
    return out


def _last(path: Path, stage: str, instruction: str) -> str | None:
    for each in _chain(path, stage):
        found = [rest for word, rest in each.body if word == instruction]
        if found:
            return found[-1]
    return None


def entrypoint(path: Path, stage: str) -> list[str] | None:
    """The exec-form ENTRYPOINT a container of ``stage`` starts, inherited where not its own."""
    given = _last(path, stage, "ENTRYPOINT")
    if given is None:
        return None
    parsed = json.loads(given)
    assert isinstance(parsed, list), f"{path.name} {stage}: ENTRYPOINT is not exec form"
    return [str(part) for part in parsed]


def user(path: Path, stage: str) -> str | None:
    """The USER a container of ``stage`` runs as (None: the base image's, root)."""
    return _last(path, stage, "USER")


def built_from(reference: str) -> tuple[RunnerImage, str]:
    """The image and the stage (the kind) that glimmer's reference ``reference`` names."""
    for image in IMAGES:
        for kind in image.kinds:
            if image.reference(kind) == reference:
                return image, kind
    raise AssertionError(f"{reference} is none of glimmer's runner images")


def runs(reference: str, command: list[str], args: list[str]) -> list[str]:
    """What a container of ``reference`` runs given a pod's ``command`` and ``args`` (Kubernetes:
    command replaces the entrypoint, args follow it; the images set no CMD)."""
    image, kind = built_from(reference)
    path = IMAGES_DIR / image.containerfile
    assert _last(path, kind, "CMD") is None, f"{image.containerfile} {kind} sets a CMD"
    start = command or entrypoint(path, kind)
    assert start, f"{image.containerfile} {kind} has no entrypoint"
    return [*start, *args]
