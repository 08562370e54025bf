"""``glimmer schedule run``: schedules fired on the simulated fleet through the engine, bounded
by --ticks and --until; every fire, skip and verdict printed; exit 0 all passed, 1 otherwise,
2 on bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glimmer.api.schedule import BurnInSchedule
from glimmer.backends.sim.fleet import fleet_backend
from glimmer.cli.app import main
from glimmer.cli.schedule_cmd import SimStore, drive_schedules
from glimmer.contract.vocab import Phase
from glimmer.engine.reconciler import Engine
from glimmer.fleet.load import load_topology
from glimmer.sim.twin import FleetSim

SCHEDULE = """\
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInSchedule
metadata:
  name: nightly
spec:
  schedule: "{cron}"
  timeZone: {zone}
  profileRef: {profile}
  concurrencyPolicy: {policy}
  target:
    nodeNames: [hgx-node-0001, hgx-node-0002]
  runTemplate:
    maxConcurrentNodes: 2
"""


def write(tmp_path: Path, **values: str) -> str:
    fields = {"cron": "0 3 * * *", "zone": "Europe/Berlin", "profile": "smoke", "policy": "Forbid"}
    fields.update(values)
    path = tmp_path / "schedule.yaml"
    path.write_text(SCHEDULE.format(**fields))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["schedule", "run", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_fires_each_tick_in_its_zone_and_prints_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "-f", write(tmp_path), "--backend", "sim", "--ticks", "2")
    assert code == 0
    fires = re.findall(r"tick (\S+) = (\d\d:\d\d) Europe/Berlin fired (nightly-\d+)", out)
    # The simulator's clock starts 2026-10-02T00:00Z; 03:00 in Berlin (CEST) is 01:00 UTC.
    assert [(t, local) for t, local, _ in fires] == [
        ("2026-10-02T01:00:00Z", "03:00"),
        ("2026-10-03T01:00:00Z", "03:00"),
    ]
    for _, _, name in fires:
        assert re.search(rf"{name}: Passed \(passed \d+, failed 0", out)
    assert "2 tick(s): 2 fired, 0 skipped, 0 missed; 2 of 2 run(s) passed" in out


def test_forbid_skips_ticks_while_a_run_is_active(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, cron="@every 30m", profile="acceptance")
    code, out, _ = run(capsys, "-f", path, "--until", "1h")
    assert code == 0
    assert re.search(r"tick 2026-10-02T00:30:00Z = 02:30 Europe/Berlin fired nightly-\d+", out)
    assert re.search(r"tick 2026-10-02T01:00:00Z skipped \(Forbid; active: nightly-\d+\)", out)
    assert "2 tick(s): 1 fired, 1 skipped" in out


def test_allow_starts_a_run_beside_the_active_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, cron="@every 30m", profile="acceptance", policy="Allow")
    code, out, _ = run(capsys, "-f", path, "--ticks", "2")
    assert out.count(" fired ") == 2
    # The second run shares targets with the first: its own admission refuses it.
    assert "TargetsBusy" in out or "admission" in out
    assert code == 1


def test_until_bounds_virtual_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "-f", write(tmp_path), "--until", "3d", "--speed", "1e9")
    assert code == 0 and out.count(" fired ") == 3


UNMEETABLE = """\
---
apiVersion: burnin.glimmer.ai/v1alpha1
kind: BurnInProfile
metadata:
  name: unmeetable
spec:
  tests:
    - inline:
        kind: host-health
        scope: Node
        durationSeconds: 30
        thresholds:
          - {metric: xidEvents, comparison: GreaterThanOrEqual, value: "1000"}
"""


def test_a_failing_run_exits_1_and_names_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path(write(tmp_path, profile="unmeetable"))
    path.write_text(path.read_text() + UNMEETABLE)
    code, out, _ = run(capsys, "-f", str(path), "--ticks", "1")
    assert code == 1
    assert "Failed" in out and "xidEvents" in out


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("61 3 * * *", "outside 0-59"),
        ("CRON_TZ=UTC 0 3 * * *", "spec.timeZone"),
    ],
)
def test_an_invalid_schedule_exits_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, words: str
) -> None:
    code, _, err = run(capsys, "-f", write(tmp_path, cron=text))
    assert code == 2 and words in err and "schedule.yaml" in err


def test_bad_until_and_missing_schedule_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "-f", write(tmp_path), "--until", "soon")
    assert code == 2 and "--until" in err
    other = tmp_path / "profile.yaml"
    other.write_text(
        "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInProfile\nmetadata: {name: p}\n"
        "spec: {tests: [{testRef: x}]}\n"
    )
    code, _, err = run(capsys, "-f", str(other))
    assert code == 2 and "no BurnInSchedule" in err


def test_profiles_in_the_same_files_are_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "glimmer-samples"
    sample = shared / "periodic-reverification.yaml"
    code, out, err = run(
        capsys, "-f", str(sample), "-f", str(shared / "node-acceptance.yaml"), "--ticks", "1"
    )
    # The sample's profile resolves from the second file; its selector matches no simulated
    # node, so the schedule is refused before its first tick, at the line of the selector.
    assert code == 2 and out == ""
    assert err.startswith(
        f"error: {sample}:46, document 2, BurnInSchedule/weekly-reverification, "
        "field spec.target.nodeSelector: target nodeSelector accelerator=example matches no nodes"
    )


def test_speed_scales_virtual_time_to_wall_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sleeps are recorded, not taken: their sum is the virtual time driven over the speed.
    slept: list[float] = []
    monkeypatch.setattr("glimmer.cli.schedule_cmd.time.sleep", slept.append)
    code, out, _ = run(capsys, "-f", write(tmp_path), "--ticks", "1", "--speed", "3600")
    assert code == 0
    last = re.findall(r"^\[2026-10-02T(\d\d):(\d\d):(\d\d)Z\]", out, re.M)[-1]
    driven = int(last[0]) * 3600 + int(last[1]) * 60 + int(last[2])
    assert sum(slept) == pytest.approx(driven / 3600, rel=1e-3, abs=1e-3)


def test_history_limits_prune_runs_on_the_simulator() -> None:
    sim = fleet_backend(FleetSim(load_topology("ai-factory")))
    schedule = BurnInSchedule.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInSchedule",
            "metadata": {
                "name": "often",
                "namespace": "default",
                "uid": "u1",
                "creationTimestamp": sim.now().isoformat(),
            },
            "spec": {
                "schedule": "@every 10m",
                "profileRef": "smoke",
                "target": {"nodeNames": ["hgx-node-0001"]},
                "successfulRunsHistoryLimit": 1,
            },
        }
    )
    store = SimStore(sim, schedule)
    lines: list[str] = []
    tally = drive_schedules(sim, Engine(sim), [store], ticks=5, say=lines.append)
    assert tally.fired == 5 and set(tally.verdicts.values()) == {Phase.PASSED}
    # Each fire's reconcile pruned all but the newest Passed run; the last run came after.
    assert len(sim.list_runs()) == 2
    status = store.schedule.status
    assert status is not None and status.last_successful_time is not None
    assert status.last_run_name == sorted(tally.verdicts)[-1]


@pytest.mark.parametrize(
    ("values", "where"),
    [
        ({"profile": "smok"}, ":8, document 1, BurnInSchedule/nightly, field spec.profileRef: "),
        (
            {"zone": "Europe/Berlinn"},
            ":7, document 1, BurnInSchedule/nightly, field spec.timeZone: unknown time zone",
        ),
    ],
    ids=["unknown-profile", "unknown-zone"],
)
def test_a_schedule_that_names_what_does_not_exist_is_refused_before_anything_fires(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], values: dict[str, str], where: str
) -> None:
    path = write(tmp_path, **values)
    code, out, err = run(capsys, "-f", path, "--ticks", "1")
    assert code == 2 and out == "", out  # no tick fired, no run was created
    assert err.startswith(f"error: {path}{where}") and err.count("\n") == 1, err


def test_a_schedule_naming_a_node_the_fleet_lacks_is_refused_at_that_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path(write(tmp_path))
    path.write_text(path.read_text().replace("hgx-node-0002]", "hgx-node-9999]"))
    code, out, err = run(capsys, "-f", str(path), "--ticks", "1")
    assert code == 2 and out == ""
    assert err.startswith(
        f"error: {path}:11, document 1, BurnInSchedule/nightly, field spec.target.nodeNames[1]: "
        "unknown node hgx-node-9999, not in fleet ai-factory"
    )


def test_a_schedule_whose_profile_names_a_missing_test_is_refused_before_anything_fires(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path(write(tmp_path, profile="mine"))
    path.write_text(
        path.read_text() + "---\napiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInProfile\n"
        "metadata: {name: mine}\nspec:\n  tests:\n    - testRef: clock-smok\n"
    )
    code, out, err = run(capsys, "-f", str(path), "--ticks", "1")
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}:20, document 2, BurnInProfile/mine, ")
    assert "field spec.tests[0].testRef: " in err and '"clock-smok"' in err


def test_a_schedule_file_holding_no_schedule_is_refused_naming_what_it_holds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")
    code, out, err = run(capsys, "-f", str(empty))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {empty}: -f: holds no BurnInSchedule")
    run_file = tmp_path / "run.yaml"
    run_file.write_text(
        "apiVersion: burnin.glimmer.ai/v1alpha1\nkind: BurnInRun\nmetadata: {name: r}\n"
        "spec: {profileRef: smoke, target: {nodeNames: [hgx-node-0001]}}\n"
    )
    code, out, err = run(capsys, "-f", str(run_file))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {run_file}:1, document 1, BurnInRun/r: -f takes BurnInSchedule")
    assert "not a BurnInRun; glimmer run -f reads it" in err


def test_a_schedule_whose_every_run_the_planner_would_refuse_is_refused_before_it_fires(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pair-network under a template cap of 1: each tick's run would end Error at start.
    path = Path(write(tmp_path, profile="pair-network"))
    path.write_text(path.read_text().replace("maxConcurrentNodes: 2", "maxConcurrentNodes: 1"))
    code, out, err = run(capsys, "-f", str(path), "--ticks", "1")
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}:1, document 1, BurnInSchedule/nightly: every run ")
    assert "maxConcurrentNodes is 1; set it to at least 2" in err and err.count("\n") == 1
