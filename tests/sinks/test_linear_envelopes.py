"""What a sink stores is linear in the run (issue 9 item 5): a TestCompleted carries the result
that settled, a Checkpoint the results in flight, a RunPhaseChanged every result; the summary
always counts the whole run. Through the engine on the simulator and at the assembler."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine_world import GATE_MISCOMPARES, ScriptedRunner, reply, run_object, spec_of, world
from sink_doubles import FakeClock, Gate

from glimmer.api.result import TestResult
from glimmer.api.run import BurnInRun
from glimmer.sinks.config import sinks_from_specs
from glimmer.sinks.directory import DirectorySink, read_directory, shards
from glimmer.sinks.envelope import (
    CHECKPOINT,
    RUN_PHASE_CHANGED,
    TEST_COMPLETED,
    Transition,
    build_envelope,
    delivery_id,
)
from glimmer.sinks.jsonl import read_jsonl
from glimmer.sinks.outbox import Outbox
from glimmer.sinks.prometheus import Exporter
from glimmer.sinks.sender import RetryPolicy, Sender
from glimmer.sinks.serve import EnvelopeSource
from glimmer.sinks.sinkset import SinkSet

AT = datetime(2026, 9, 1, 10, 0, tzinfo=UTC)
GATED = spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])


def _result(name: str, node: str, phase: str) -> dict[str, Any]:
    return {"name": name, "kind": "gpu-burn", "scope": "Node", "phase": phase, "nodes": [node]}


def _run(results: list[dict[str, Any]]) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "r", "namespace": "lab", "uid": "u-1"},
            "spec": {"profileRef": "p", "target": {"nodeNames": ["gpu-01"]}},
            "status": {
                "phase": "Running",
                "fingerprint": {f"gpu-0{i}": f"kernel=6.{i}" for i in (1, 2, 3)},
                "results": results,
                "passed": 2,
                "failed": 1,
                "errored": 0,
                "skipped": 0,
            },
        }
    )


THREE = [
    _result("burn", "gpu-01", "Passed"),
    _result("burn", "gpu-02", "Failed"),
    _result("burn", "gpu-03", "Running"),
    _result("clock", "gpu-01", "Passed"),
]


def _names(env: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(r["name"], r["nodes"][0], r["phase"]) for r in env.get("results", ())]


def test_a_test_completed_envelope_carries_only_the_result_that_settled() -> None:
    run = _run(THREE)
    settled = TestResult.model_validate(_result("burn", "gpu-02", "Failed"))
    env = build_envelope(Transition(TEST_COMPLETED, "burn/gpu-02", run, result=settled), sent_at=AT)
    assert _names(env) == [("burn", "gpu-02", "Failed")]
    assert env["fingerprint"] == {"gpu-02": "kernel=6.2"}  # its node's, not the run's
    assert env["summary"] == {"passed": 2, "failed": 1, "errored": 0, "skipped": 0}


def test_a_test_completed_envelope_without_its_result_finds_it_by_the_key() -> None:
    env = build_envelope(Transition(TEST_COMPLETED, "clock/gpu-01", _run(THREE)), sent_at=AT)
    assert _names(env) == [("clock", "gpu-01", "Passed")]


def test_a_checkpoint_carries_only_the_results_in_flight() -> None:
    env = build_envelope(Transition(CHECKPOINT, "1", _run(THREE), sequence=1), sent_at=AT)
    assert _names(env) == [("burn", "gpu-03", "Running")]
    assert env["summary"]["failed"] == 1


def test_a_phase_change_carries_every_result() -> None:
    env = build_envelope(Transition(RUN_PHASE_CHANGED, "Failed", _run(THREE)), sent_at=AT)
    assert len(env["results"]) == len(THREE)
    assert len(env["fingerprint"]) == 3


def _file_sink_run(tmp_path: Path, nodes: int) -> tuple[list[dict[str, Any]], int]:
    runner = ScriptedRunner(default="miscompares=0\nok").on(reply("miscompares=2"), node="node-001")
    w = world(nodes, {"a": GATED, "b": GATED}, [{"testRef": "a"}, {"testRef": "b"}], runner=runner)
    path = tmp_path / f"envelopes-{nodes}.jsonl"
    w.backend.sink_set = sinks_from_specs([f"file={path}"])
    w.submit(run_object(targets=[f"node-{i:03d}" for i in range(nodes)]))
    w.drive()
    return list(read_jsonl(path)), path.stat().st_size


def test_a_file_sink_holds_each_settled_result_once_plus_the_terminal_verdict(
    tmp_path: Path,
) -> None:
    envelopes, _ = _file_sink_run(tmp_path, 8)
    completed = [e for e in envelopes if e["reason"] == TEST_COMPLETED]
    phases = [e for e in envelopes if e["reason"] == RUN_PHASE_CHANGED]
    assert [e["phase"] for e in phases] == ["Running", "Failed"]
    # One TestCompleted per unit, each carrying exactly that unit's result.
    keys = sorted(f"{r['name']}/{'+'.join(r['nodes'])}" for e in completed for r in e["results"])
    assert keys == sorted(f"{t}/node-{i:03d}" for t in "ab" for i in range(8))
    assert all(len(e["results"]) == 1 for e in completed)
    # The counters are the whole run's, so the last one has seen node-001's failures.
    assert completed[-1]["summary"]["failed"] == 2
    assert len(phases[-1]["results"]) == 16


def test_bytes_a_file_sink_stores_per_result_stay_flat_as_the_run_grows(tmp_path: Path) -> None:
    small = _file_sink_run(tmp_path, 4)
    large = _file_sink_run(tmp_path, 32)
    per_small = small[1] / 8
    per_large = large[1] / 64
    assert per_large < 1.5 * per_small, (per_small, per_large)
    # Each line is one envelope; none but a phase change grows with the run.
    sizes = [len(json.dumps(e)) for e in large[0] if e["reason"] == TEST_COMPLETED]
    assert max(sizes) < 3 * min(sizes)


def test_a_folder_sink_holds_a_run_bigger_than_one_object_and_serves_it_back(
    tmp_path: Path,
) -> None:
    # The same shape as a 1,024-node run into a 900 KiB ConfigMap, scaled down: 40 nodes into
    # objects of 6,000 bytes, so the terminal envelope alone needs several of them.
    runner = ScriptedRunner(default="miscompares=0\nok").on(reply("miscompares=2"), node="node-001")
    w = world(40, {"a": GATED, "b": GATED}, [{"testRef": "a"}, {"testRef": "b"}], runner=runner)
    root = tmp_path / "cm"
    budget = 6_000
    w.backend.sink_set = SinkSet(always=[DirectorySink(root, budget=budget)])
    w.submit(run_object(targets=[f"node-{i:03d}" for i in range(40)]))
    w.drive()
    ids = {delivery_id(d.run_uid, d.reason, d.key) for d in w.backend.deliveries}
    stored = dict((e["deliveryId"], e) for _, e in read_directory(root))
    assert set(stored) == ids
    terminal = [
        e for e in stored.values() if e["reason"] == RUN_PHASE_CHANGED and e["phase"] == "Failed"
    ]
    assert len(terminal) == 1 and len(terminal[0]["results"]) == 80
    assert len(shards(root)) > 2 and list(root.rglob("*.part"))  # it took shards and parts
    for shard in shards(root):
        assert sum(len(p.name) + p.stat().st_size for p in shard.iterdir() if p.is_file()) <= budget
    exporter = Exporter()
    EnvelopeSource(root, exporter).refresh()
    text = exporter.exposition()
    assert 'run="run",profile="prof",phase="Failed"} 1' in text
    assert 'burnin_run_tests{namespace="default",run="run",phase="Passed"} 78' in text


def _outbox_bytes(tmp_path: Path, nodes: int) -> int:
    runner = ScriptedRunner(default="miscompares=0\nok")
    w = world(nodes, {"a": GATED, "b": GATED}, [{"testRef": "a"}, {"testRef": "b"}], runner=runner)
    state = tmp_path / f"state-{nodes}"
    policy = RetryPolicy(attempts=1, base=1.0, cap=1.0, timeout=0.1, budget=5.0)
    w.backend.sink_set = SinkSet(
        always=[Gate()], outbox=Outbox(state), sender=Sender(policy, FakeClock())
    )
    w.submit(run_object(targets=[f"node-{i:03d}" for i in range(nodes)]))
    w.drive(until=3_600.0)  # the terminal envelope is re-announced: stop after an hour
    return (state / "outbox.jsonl").stat().st_size


def test_the_outbox_of_a_dead_sink_grows_linearly_with_the_run(tmp_path: Path) -> None:
    # Everything the run sends waits for the dead sink; per result, that must not grow with
    # the width of the run (the outbox held every cumulative envelope before).
    small = _outbox_bytes(tmp_path, 4) / 8
    large = _outbox_bytes(tmp_path, 40) / 80
    assert large < 1.5 * small, (small, large)
