"""The per-kind stages of deploy/images/*.Containerfile and the build script that tags them:
every kind an image serves has a stage whose entrypoint runs that kind, as uid 65532, and
build.sh builds exactly the references glimmer asks for (contract/images.py), each from the
stage of its kind."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from glimmer.contract.images import ENTRYPOINT, IMAGES, RunnerImage, every_tag
from tests.deploy.containerfile import IMAGES_DIR, ROOT, entrypoint, labels, stages, user

NOT_A_KIND = {"base", "any-kind", "perftest-cuda"}  # the common stage, the default, a builder


def _kind_stages(image: RunnerImage) -> list[str]:
    return [name for name in stages(IMAGES_DIR / image.containerfile) if name not in NOT_A_KIND]


@pytest.mark.parametrize("image", IMAGES, ids=lambda i: i.repository)
def test_the_image_has_a_stage_for_each_kind_it_serves_and_no_other(image: RunnerImage) -> None:
    path = IMAGES_DIR / image.containerfile
    assert sorted(_kind_stages(image)) == sorted(image.kinds)
    assert sorted(labels(path)["ai.glimmer.runner.kinds"].split()) == sorted(image.kinds)


@pytest.mark.parametrize("image", IMAGES, ids=lambda i: i.repository)
def test_each_kinds_stage_starts_the_runner_of_that_kind(image: RunnerImage) -> None:
    path = IMAGES_DIR / image.containerfile
    for kind in image.kinds:
        assert entrypoint(path, kind) == [*ENTRYPOINT, kind], kind
        own = [rest for word, rest in stages(path)[kind].body if word == "LABEL"]
        assert f'ai.glimmer.runner.kind="{kind}"' in own, kind


@pytest.mark.parametrize("image", IMAGES, ids=lambda i: i.repository)
def test_the_stage_built_without_a_target_names_no_kind(image: RunnerImage) -> None:
    path = IMAGES_DIR / image.containerfile
    last = list(stages(path))[-1]
    assert last == "any-kind" and entrypoint(path, last) == list(ENTRYPOINT)


@pytest.mark.parametrize("image", IMAGES, ids=lambda i: i.repository)
def test_every_kinds_stage_runs_as_uid_65532(image: RunnerImage) -> None:
    path = IMAGES_DIR / image.containerfile
    for kind in [*image.kinds, "any-kind"]:
        assert user(path, kind) == "65532:65532", kind


def _fake_podman(tmp_path: Path) -> Path:
    log = tmp_path / "calls"
    podman = tmp_path / "bin" / "podman"
    podman.parent.mkdir()
    podman.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {shlex.quote(str(log))}\n')
    podman.chmod(0o755)
    return log


def _build(tmp_path: Path, **env: str) -> list[list[str]]:
    log = _fake_podman(tmp_path)
    path = f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"
    subprocess.run(
        [str(IMAGES_DIR / "build.sh")],
        cwd=ROOT,
        env={**os.environ, "PATH": path, "PYTHON": sys.executable, **env},
        check=True,
        capture_output=True,
    )
    calls = [line.split() for line in log.read_text().splitlines()]
    return [c for c in calls if c[0] == "build"]


def _flag(call: list[str], name: str) -> str:
    return call[call.index(name) + 1]


def test_the_build_script_builds_every_reference_glimmer_asks_for_from_its_kinds_stage(
    tmp_path: Path,
) -> None:
    builds = _build(tmp_path, PUSH="")
    made = [(_flag(c, "-f"), _flag(c, "--target"), _flag(c, "--manifest")) for c in builds]
    assert made == [
        (f"deploy/images/{image.containerfile}", kind, reference)
        for image, kind, reference in every_tag()
    ]
    assert all(_flag(c, "--platform") == "linux/amd64,linux/arm64" for c in builds)


def test_the_build_script_builds_only_the_kinds_asked_for(tmp_path: Path) -> None:
    builds = _build(tmp_path, KINDS="gemm-sweep ib-write-bw")
    assert sorted(_flag(c, "--target") for c in builds) == ["gemm-sweep", "ib-write-bw"]
