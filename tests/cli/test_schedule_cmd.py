"""``glimmer schedule run``: schedules fired on the simulated fleet through the engine, bounded
by --ticks and --until; every fire, skip and verdict printed; exit 0 all passed, 1 otherwise,
2 on bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glimmer.api.schedule import BurnInSchedule
from glimmer.backends.sim_fleet import fleet_backend
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


def test_a_failing_run_exits_1_and_names_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "schedule.yaml"
    write(tmp_path)
    text = path.read_text().replace(
        "nodeNames: [hgx-node-0001, hgx-node-0002]", "nodeSelector: {accelerator: none}"
    )
    path.write_text(text)
    code, out, _ = run(capsys, "-f", str(path), "--ticks", "1")
    assert code == 1
    assert "Error" in out and "matches no nodes" in out


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
    code, out, _ = run(
        capsys,
        "-f",
        str(shared / "periodic-reverification.yaml"),
        "-f",
        str(shared / "node-acceptance.yaml"),
        "--ticks",
        "1",
    )
    # The sample's selector matches no simulated node: fired, then an Error verdict saying so.
    assert "weekly-reverification: tick 2026-10-04T03:00:00Z = 03:00 Etc/UTC fired" in out
    assert "accelerator=example matches no nodes" in out and code == 1


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
