"""``glimmer baseline strip`` and ``glimmer baseline derive`` over files, as a user runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

from glimmer.api.dump import dump_json, dump_yaml
from glimmer.api.load import load_paths
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTest
from glimmer.backends.sim.driver import run_to_completion
from glimmer.backends.sim.fleet import fleet_backend
from glimmer.cli.app import main
from glimmer.engine.reconciler import Engine
from glimmer.fleet.build import build
from glimmer.fleet.generate import generate_fleet
from glimmer.sim.twin import FleetSim

NODES = 12


def _strip(tmp_path: Path) -> Path:
    out = tmp_path / "acceptance-bare.yaml"
    assert main(["baseline", "strip", "--profile", "acceptance", "--out", str(out)]) == 0
    return out


def _simulate(files: Path, *, baseline: bool, name: str = "baseline-1") -> BurnInRun:
    loaded = load_paths([str(files)])
    profile = next(i.obj for i in loaded if isinstance(i.obj, BurnInProfile))
    tests = {i.name: i.obj.spec for i in loaded if isinstance(i.obj, BurnInTest)}
    topo = build(generate_fleet(NODES * 8, "hgx", "cli-baseline"), source="generated")
    backend = fleet_backend(FleetSim(topo), seed=5, tests=tests, profiles={profile.name: profile})
    run = BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "profileRef": profile.name,
                "baseline": baseline,
                "maxConcurrentNodes": NODES,
                "target": {"nodeNames": [n.hostname for n in topo.nodes]},
            },
        }
    )
    return run_to_completion(backend, Engine(backend), run)


@pytest.fixture(scope="module")
def baseline_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished baseline run of the stripped acceptance profile, as `glimmer run
    --output json` writes it."""
    folder = tmp_path_factory.mktemp("baseline")
    run = _simulate(_strip(folder), baseline=True)
    path = folder / "baseline-1.json"
    path.write_text(dump_json([run]), encoding="utf-8")
    return path


def test_strip_writes_the_profile_and_its_tests_without_a_gate(tmp_path: Path) -> None:
    loaded = load_paths([str(_strip(tmp_path))])
    assert [i.ref for i in loaded][:2] == [
        "BurnInProfile/acceptance",
        "BurnInTest/host-fault-counters",
    ]
    assert all(i.obj.spec.thresholds is None for i in loaded if isinstance(i.obj, BurnInTest))
    assert "thresholds" not in (tmp_path / "acceptance-bare.yaml").read_text(encoding="utf-8")


def test_derive_writes_a_profile_that_lints_clean(
    baseline_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "acceptance-pinned.yaml"
    code = main(
        ["baseline", "derive", str(baseline_run), "--profile", "acceptance", "--out", str(out)]
    )
    assert code == 0
    said = capsys.readouterr().err
    assert "acceptance (NVIDIA-H100-80GB-HBM3):" in said and f"wrote {out}" in said
    assert main(["lint", str(out)]) == 0
    loaded = load_paths([str(out)])
    gates = [
        g for i in loaded if isinstance(i.obj, BurnInTest) for g in i.obj.spec.thresholds or []
    ]
    assert len(gates) > 20
    text = out.read_text(encoding="utf-8")
    assert text.count("#   rule: ") == len(gates)


def test_derive_reads_yaml_runs_and_takes_a_profile_file(
    baseline_run: Path, tmp_path: Path
) -> None:
    runs = load_paths([str(baseline_run)])
    as_yaml = tmp_path / "baseline-1.yaml"
    as_yaml.write_text(dump_yaml([runs[0].obj]), encoding="utf-8")
    profile_file = _strip(tmp_path)
    out = tmp_path / "pinned.yaml"
    argv = ["baseline", "derive", str(as_yaml), "--profile", str(profile_file), "--out", str(out)]
    flags = ["--k", "8", "--min-samples", "3", "--min-margin-pct", "2.5", "--whole-fleet"]
    assert main([*argv, *flags]) == 0
    text = out.read_text(encoding="utf-8")
    assert "k = 8 " in text and "2.5% of |median|" in text
    assert "Every node of the baseline runs" in text


def test_derive_refuses_a_run_that_is_not_a_baseline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _simulate(_strip(tmp_path), baseline=False, name="certify-1")
    path = tmp_path / "certify-1.json"
    path.write_text(dump_json([run]), encoding="utf-8")
    capsys.readouterr()
    code = main(["baseline", "derive", str(path), "--profile", "acceptance", "--out", "x.yaml"])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}") and "BurnInRun certify-1 is not a baseline run" in err
    assert "spec.baseline" in err and not (tmp_path / "x.yaml").exists()


def test_derive_refuses_an_unknown_profile_and_a_file_without_runs(
    baseline_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["baseline", "derive", str(baseline_run), "--profile", "nope", "--out", "-"]
    assert main(argv) == 2
    assert "unknown profile 'nope'" in capsys.readouterr().err
    profile_only = _strip(tmp_path)
    argv = ["baseline", "derive", str(profile_only), "--profile", "acceptance", "--out", "-"]
    assert main(argv) == 2
    assert "no BurnInRun in the files given" in capsys.readouterr().err


def test_derive_to_stdout_and_exclude_a_node(
    baseline_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = "hgx-su000-node-0000"
    argv = ["baseline", "derive", str(baseline_run), "-p", "acceptance", "--out", "-"]
    assert main([*argv, "--exclude", node]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Derived by `glimmer baseline derive`")
    assert f"excluded on request: {node}" in out and f"unit: {node} " not in out


def test_derive_refuses_a_file_flag_that_holds_nothing_rather_than_use_a_built_in(
    baseline_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "profiles.yaml"
    empty.write_text("# the profile was meant to be here\n", encoding="utf-8")
    out = tmp_path / "derived.yaml"
    argv = ["baseline", "derive", str(baseline_run), "--profile", "acceptance"]
    assert main([*argv, "--file", str(empty), "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"error: {empty}: --file: holds no BurnInTest or BurnInProfile (no document at all: "
        "empty or comments only)"
    )
    assert not out.exists()


REPO = Path(__file__).resolve().parents[2]
CERTIFICATION = REPO / "tests" / "certify" / "catalog" / "samples" / "certification-h100.yaml"
FLEET = REPO / "src" / "glimmer" / "data" / "fleets" / "hgx-fixture.yaml"


@pytest.mark.parametrize("command", ["strip", "derive"])
@pytest.mark.parametrize(
    ("given", "words"),
    [
        (None, "--file: holds no BurnInTest or BurnInProfile (no document at all"),
        (CERTIFICATION, "--file takes BurnInTest or BurnInProfile, not a Certification"),
        (FLEET, "--file takes BurnInTest or BurnInProfile, not a Fleet"),
    ],
    ids=["empty", "certification", "fleet"],
)
def test_baseline_refuses_a_file_that_holds_no_test_or_profile_naming_what_it_holds(
    baseline_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    given: Path | None,
    words: str,
) -> None:
    # Before, such a file was read for nothing and the built-in profile was used instead.
    if given is None:
        given = tmp_path / "empty.yaml"
        given.write_text("", encoding="utf-8")
    out = tmp_path / "out.yaml"
    runs = [str(baseline_run)] if command == "derive" else []
    argv = ["baseline", command, *runs, "-p", "acceptance", "--file", str(given)]
    assert main([*argv, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith(f"error: {given}") and words in line
    assert "Traceback" not in captured.err and not out.exists()
