"""``glimmer operator manifests``: the deployment checked in under deploy/operator, printed as
one stream for ``kubectl apply -f -`` or written file by file — from the CLI, which imports no
cluster library to do it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
GLIMMER = str(Path(sys.executable).with_name("glimmer"))
DEPLOY = REPO / "deploy" / "operator"


def test_the_stream_holds_every_object_the_checked_in_files_hold() -> None:
    done = subprocess.run([GLIMMER, "operator", "manifests"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    printed = [d for d in yaml.safe_load_all(done.stdout) if d]
    checked_in = [
        d for p in sorted(DEPLOY.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d
    ]
    assert printed == checked_in


def test_output_dir_writes_the_files_as_deploy_operator_holds_them(tmp_path: Path) -> None:
    done = subprocess.run(
        [GLIMMER, "operator", "manifests", "--output-dir", str(tmp_path / "out")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in (tmp_path / "out").glob("*.yaml"))
    assert written == sorted(p.name for p in DEPLOY.glob("*.yaml"))
    for name in written:
        assert (tmp_path / "out" / name).read_text() == (DEPLOY / name).read_text()


def test_an_image_given_is_the_deployments_image() -> None:
    done = subprocess.run(
        [GLIMMER, "operator", "manifests", "--image", "registry.example/glimmer-operator:7"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    deployment = next(d for d in yaml.safe_load_all(done.stdout) if d and d["kind"] == "Deployment")
    images = [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert images == ["registry.example/glimmer-operator:7"]
