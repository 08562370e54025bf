"""deploy/images/*.Containerfile, checked without building them: each image runs as uid 65532,
serves only kinds that exist and have a runner program, and copies only glimmer/contract and
glimmer/runners of the source tree (the runners import nothing else of glimmer).

Named test_containerfiles.py, not test_images.py: tests/plan/test_images.py holds that basename
and pytest's default import mode refuses two test modules of one name."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from glimmer.contract.kinds import BUILT_IN
from tests.deploy.containerfile import ROOT, instructions, labels

IMAGES = ROOT / "deploy" / "images"
RUNNERS = ROOT / "src" / "glimmer" / "runners"
CONTAINERFILES = sorted(IMAGES.glob("*.Containerfile"))
KINDS_LABEL = "ai.glimmer.runner.kinds"
ALLOWED_SOURCES = {"src/glimmer/contract", "src/glimmer/runners"}


def module_path(kind: str) -> Path:
    """Where glimmer-runner finds a kind's program (runners/cli.py: ``-`` becomes ``_``)."""
    return RUNNERS / f"{kind.replace('-', '_')}.py"


def test_both_images_are_there() -> None:
    assert [p.name for p in CONTAINERFILES] == ["cuda.Containerfile", "runner.Containerfile"]


@pytest.mark.parametrize("path", CONTAINERFILES, ids=lambda p: p.name)
def test_the_image_runs_as_uid_65532(path: Path) -> None:
    users = [rest for word, rest in instructions(path) if word == "USER"]
    assert users, f"{path.name} has no USER: it would run as root"
    # The last USER is the one the runner starts as.
    assert re.fullmatch(r"65532(:65532)?", users[-1]), users[-1]


@pytest.mark.parametrize("path", CONTAINERFILES, ids=lambda p: p.name)
def test_the_kinds_label_names_only_built_in_kinds_with_a_runner_module(path: Path) -> None:
    kinds = labels(path).get(KINDS_LABEL, "").split()
    assert kinds, f"{path.name} has no {KINDS_LABEL} label"
    assert len(kinds) == len(set(kinds)), f"a kind is listed twice: {kinds}"
    unknown = [k for k in kinds if k not in BUILT_IN]
    assert not unknown, f"not in contract/kinds.py: {unknown}"
    no_program = [k for k in kinds if not module_path(k).is_file()]
    assert not no_program, f"no module under src/glimmer/runners/: {no_program}"


@pytest.mark.parametrize("path", CONTAINERFILES, ids=lambda p: p.name)
def test_only_the_contract_and_the_runners_are_copied_from_the_source_tree(path: Path) -> None:
    sources: set[str] = set()
    for word, rest in instructions(path):
        if word == "ADD":
            pytest.fail(f"{path.name} uses ADD ({rest}): COPY says exactly what is taken")
        if word != "COPY":
            continue
        args = [a for a in shlex.split(rest) if not a.startswith("--")]
        if any(a.startswith("--from") for a in shlex.split(rest)):
            continue  # from another stage, not the build context
        sources.update(a.rstrip("/") for a in args[:-1])
    assert sources == ALLOWED_SOURCES


def test_the_label_parser_reads_a_continued_quoted_label(tmp_path: Path) -> None:
    path = tmp_path / "x.Containerfile"
    path.write_text('FROM x\n# c\nLABEL a="b c" \\\n  ai.glimmer.runner.kinds="nccl disk-io"\n')
    assert labels(path) == {"a": "b c", KINDS_LABEL: "nccl disk-io"}
