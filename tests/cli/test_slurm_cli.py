"""``glimmer run --backend slurm`` and ``glimmer reap --backend slurm`` on a real cluster: a
run's verdict per node with every node given back, an administrator's drain refused at start
(and still there afterwards), the reaper before admission and for cron, and bad input exiting 2
naming the flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from glimmer.api.run import BurnInRun
from glimmer.backends.slurm.nodes import SlurmNodes
from glimmer.cli.app import main
from glimmer.contract.vocab import Phase
from glimmer.engine.keys import CORDON_OWNER, PRIOR_UNSCHEDULABLE
from tests.slurm_cluster import SlurmCluster

API = "burnin.glimmer.ai/v1alpha1"


def _quick_profile(tmp_path: Path) -> Path:
    """A host-health test watching for one second as the whole profile."""
    path = tmp_path / "quick.yaml"
    test = {"kind": "host-health", "durationSeconds": 1}
    docs = [
        {"apiVersion": API, "kind": "BurnInTest", "metadata": {"name": "health"}, "spec": test},
        {
            "apiVersion": API,
            "kind": "BurnInProfile",
            "metadata": {"name": "quick"},
            "spec": {"tests": [{"testRef": "health"}]},
        },
    ]
    path.write_text(yaml.safe_dump_all(docs))
    return path


@pytest.fixture
def cluster_env(slurm_cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch) -> SlurmCluster:
    """The cluster, its client environment (SLURM_CONF, the wrappers' PATH) made glimmer's."""
    for key, value in slurm_cluster.env.items():
        monkeypatch.setenv(key, value)
    return slurm_cluster


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["run", "--backend", "slurm", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_run_judges_each_node_and_gives_every_node_back(
    cluster_env: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    nodes = ",".join(cluster_env.nodes[:2])
    args = ("-f", str(_quick_profile(tmp_path)), "--state-dir", str(state), "--nodes", nodes)
    code, out, err = _run(capsys, *args, "-o", "json")
    assert code == 0, err
    final = BurnInRun.model_validate(json.loads(out))
    assert final.status is not None and final.status.phase is Phase.PASSED
    assert sorted(n for r in final.status.results or () for n in r.nodes or ()) == sorted(
        cluster_env.nodes[:2]
    )
    for node in cluster_env.nodes:
        cluster_env.wait_idle(node)
    assert cluster_env.reservations() == []
    # The same command again: the finished run is replaced by a new one, which passes too.
    code, out, err = _run(capsys, *args)
    assert code == 0, err
    assert "(started (the finished run of that name replaced))" in out
    assert "Passed" in out


def test_an_administrator_s_drain_refuses_the_run_at_start_and_stays(
    cluster_env: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    drained, free = cluster_env.nodes[1], cluster_env.nodes[0]
    cluster_env.drain(drained, "fan 3 replaced, awaiting burn-in")
    try:
        state = tmp_path / "state"
        code, out, err = _run(
            capsys, "--state-dir", str(state), "--nodes", f"{free},{drained}", "-o", "json"
        )
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and err.startswith("error: --nodes: refused")
        assert f"{drained}: drained, reason 'fan 3 replaced, awaiting burn-in'" in err
        assert free not in err.split("refused", 1)[1].split("(resume")[0]
        # Nothing submitted, nothing drained: no run, no job record, the free node idle.
        assert not (state / "runs").exists() and not (state / "executions").exists()
        assert cluster_env.node_state(free) == "idle"
        assert cluster_env.node_state(drained) == "drain"
        assert cluster_env.reason(drained) == "fan 3 replaced, awaiting burn-in"
    finally:
        cluster_env.resume(drained)
    cluster_env.wait_idle(drained)


def test_the_reaper_runs_before_admission_and_as_a_command(
    cluster_env: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    orphan = cluster_env.nodes[0]
    nodes = SlurmNodes(state, cluster_env.slurm)
    stamp = {CORDON_OWNER: "default/deleted/uid-gone", PRIOR_UNSCHEDULABLE: "false"}
    nodes.update_node(orphan, annotations=stamp)
    nodes.update_node(orphan, unschedulable=True)
    assert main(["reap", "--backend", "slurm", "--state-dir", str(state)]) == 0
    out = capsys.readouterr().out
    assert out == f"reaped {orphan}: resumed — run default/deleted/uid-gone\n"
    cluster_env.wait_idle(orphan)
    assert main(["reap", "--state-dir", str(state)]) == 0
    assert capsys.readouterr().out.startswith("reaped nothing")
    # Orphaned again, then a run on that very node: reaped first, so the run takes it.
    nodes.update_node(orphan, annotations=stamp)
    nodes.update_node(orphan, unschedulable=True)
    code, out, err = _run(
        capsys, "-f", str(_quick_profile(tmp_path)), "--state-dir", str(state), "--nodes", orphan
    )
    assert code == 0, err
    assert f"reaped     {orphan}: resumed — run default/deleted/uid-gone" in out
    cluster_env.wait_idle(orphan)


@pytest.mark.parametrize(
    ("args", "named"),
    [
        ((), "--state-dir"),
        (("--state-dir", "{tmp}", "--fleet", "ai-factory-mini"), "--fleet"),
        (("--state-dir", "{tmp}", "--node", "n1"), "--node"),
        (("--state-dir", "{tmp}", "--runtime", "docker"), "--runtime"),
        (("--state-dir", "{tmp}", "--runner-path", "bin/glimmer-runner"), "--runner-path"),
        (("--state-dir", "{tmp}", "--max-concurrent", "0"), "--max-concurrent"),
        (("--state-dir", "{file}/state"), "--state-dir"),
    ],
)
def test_bad_input_exits_2_naming_the_flag_before_the_cluster_is_asked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: tuple[str, ...], named: str
) -> None:
    (tmp_path / "file").write_text("a file, not a folder")
    given = (a.replace("{tmp}", str(tmp_path / "s")) for a in args)
    code, out, err = _run(capsys, *(a.replace("{file}", str(tmp_path / "file")) for a in given))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and named in err and err.count("\n") == 1
    assert not (tmp_path / "s" / "runs").exists()


@pytest.mark.parametrize("flag", ["--slurm-partition", "--runner-path"])
def test_slurm_flags_mean_nothing_on_another_backend(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    assert main(["run", flag, "x"]) == 2
    assert f"{flag}: only with --backend slurm" in capsys.readouterr().err


def test_reap_of_another_backend_or_without_a_state_dir_is_bad_input(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["reap", "--backend", "local", "--state-dir", "/tmp"]) == 2
    assert "--backend local" in capsys.readouterr().err
    assert main(["reap"]) == 2
    assert "--state-dir" in capsys.readouterr().err


def test_the_registry_offers_slurm_and_builds_its_backend(tmp_path: Path) -> None:
    from glimmer.backends.common.registry import entry
    from glimmer.backends.slurm.backend import SlurmBackend

    built = entry("slurm").factory(tmp_path / "state", partition="debug")  # type: ignore[misc]
    assert isinstance(built, SlurmBackend) and built.nodes.partition == "debug"


def test_a_dry_run_shows_the_plan_and_submits_and_drains_nothing(
    cluster_env: SlurmCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    args = ("-f", str(_quick_profile(tmp_path)), "--state-dir", str(state), "--dry-run")
    code, out, err = _run(capsys, *args, "-o", "json")
    assert code == 0, err
    assert sorted(json.loads(out)["plan"]["targets"]) == sorted(cluster_env.nodes)
    assert not (state / "runs").exists() and cluster_env.active_jobs() == []
    assert all(cluster_env.node_state(n) == "idle" for n in cluster_env.nodes)
