"""The ledger (specs/burnin.md Appendix D #2): every field of the §5.3 contract is populated by
the one envelope assembler, at Node, Pair and Group scope and for a segmented soak, on envelopes
the engine delivered through the simulator backend. Every deliveryId is the one the engine's
(run UID, reason, key) implies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from engine_world import GATE_MISCOMPARES, ScriptedRunner, reply, run_object, spec_of, world

from glimmer.sinks.config import sinks_from_specs
from glimmer.sinks.envelope import VERSION, Cluster, delivery_id
from glimmer.sinks.jsonl import read_jsonl

# Top-level fields every envelope carries, and those a run's envelopes must show somewhere.
ALWAYS = {"version", "deliveryId", "reason", "sentAt", "run", "phase", "summary"}
RUN_FIELDS = {"namespace", "name", "uid", "profile"}
SOMEWHERE = {"fingerprint", "results", "cluster"}
# Result fields every real (not synthetic) result of a settled envelope shows.
RESULT_ALWAYS = {"name", "kind", "scope", "phase", "nodes", "startedAt", "finishedAt", "metrics"}

PAIR = spec_of(
    "ib-write-bw",
    scope="Pair",
    thresholds=[{"metric": "bandwidthGbps", "comparison": "GreaterThanOrEqual", "value": "300"}],
)
GROUP = spec_of(
    "nccl",
    scope="Group",
    thresholds=[{"metric": "busBandwidthGBs", "comparison": "GreaterThanOrEqual", "value": "300"}],
)
SOAK = spec_of(
    "thermal-soak",
    durationSeconds=900,
    soak={"segmentSeconds": 300},
    checkpointIntervalSeconds=120,
    thresholds=[{"metric": "gpuTempC", "comparison": "LessThanOrEqual", "value": "80"}],
)
HEALTH = spec_of(
    "host-health",
    thresholds=[
        {"metric": "xidEvents", "comparison": "Equal", "value": "0"},
        {
            "metric": "eccErrors",
            "comparison": "Equal",
            "value": "0",
            "applicability": "RequiredIfMeasurable",
        },
    ],
)
BURN = spec_of("gpu-burn", checkpointIntervalSeconds=120, thresholds=[GATE_MISCOMPARES])


def _deliver(w: Any, tmp_path: Path, **run_spec: Any) -> list[dict[str, Any]]:
    """Drive the world's run with a file sink and a cluster identity; every envelope it got,
    each checked against the engine's own deliveries."""
    path = tmp_path / "envelopes.jsonl"
    w.backend.sink_set = sinks_from_specs(
        [f"file={path}"], cluster=Cluster(name="lab-east", uid="ks-uid-1")
    )
    before = len(w.backend.deliveries)
    w.submit(run_object(**run_spec))
    w.drive()
    envelopes = list(read_jsonl(path))
    ours = w.backend.deliveries[before:]
    # A re-announced terminal envelope (another sink did not take it) reaches a sink that
    # already took it only once: each implied id, in order, once.
    implied = list(dict.fromkeys(delivery_id(d.run_uid, d.reason, d.key) for d in ours))
    assert [e["deliveryId"] for e in envelopes] == implied
    for e in envelopes:
        assert e.keys() >= ALWAYS, e["reason"]
        assert e["version"] == VERSION and len(e["deliveryId"]) == 32
        assert e["run"].keys() >= RUN_FIELDS
        assert set(e["summary"]) == {"passed", "failed", "errored", "skipped"}
        assert e["cluster"] == {"name": "lab-east", "uid": "ks-uid-1"}
    return envelopes


def _terminal(envelopes: list[dict[str, Any]]) -> dict[str, Any]:
    """The terminal envelope (the last, if it was re-sent: always under the same id)."""
    final = [e for e in envelopes if e["reason"] == "RunPhaseChanged" and e["phase"] != "Running"]
    assert final and len({e["deliveryId"] for e in final}) == 1
    return final[-1]


def _check_results(envelope: dict[str, Any], scope: str) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = envelope["results"]
    for r in results:
        assert r.keys() >= RESULT_ALWAYS, (r["name"], RESULT_ALWAYS - r.keys())
        assert r["scope"] == scope
    return results


def test_node_scope_envelopes_carry_every_field(tmp_path: Path) -> None:
    runner = (
        ScriptedRunner(default="miscompares=0\nburn ok")
        .on(reply("miscompares=4\nburn saw wrong answers"), test="burn", node="node-001")
        .on(reply("xidEvents=0\neccErrors=n/a\nhealthy"), test="health")
        .on(reply("throughputTflops=900\ngemm ok"), test="gemm-fp8")
    )
    gemm = {"testRef": "gemm", "variants": [{"name": "fp8", "axes": {"precision": "fp8"}}]}
    w = world(
        2,
        {"burn": BURN, "health": HEALTH, "gemm": spec_of("gemm-sweep")},
        [{"testRef": "burn"}, {"testRef": "health"}, gemm],
        runner=runner,
    )
    envelopes = _deliver(w, tmp_path, targets=["node-000", "node-001"], maxConcurrentNodes=2)
    reasons = {e["reason"] for e in envelopes}
    assert reasons == {"RunPhaseChanged", "TestCompleted", "Checkpoint"}
    assert envelopes[0]["reason"] == "RunPhaseChanged" and envelopes[0]["phase"] == "Running"
    # The Running envelope describes the run as markRunning records it: fingerprint included.
    assert set(envelopes[0]["fingerprint"]) == {"node-000", "node-001"}
    for e in envelopes:
        if e["reason"] == "Checkpoint":
            assert e["checkpointSequence"] >= 1 and e["phase"] == "Running"
        else:
            assert "checkpointSequence" not in e
        if e["reason"] == "TestCompleted":
            assert e["phase"] == "Running"  # the run's phase, not the result's
    final = _terminal(envelopes)
    assert final["phase"] == "Failed" and final.keys() >= SOMEWHERE
    assert final["summary"] == {"passed": 5, "failed": 1, "errored": 0, "skipped": 0}
    assert set(final["fingerprint"]) == {"node-000", "node-001"}
    by = {(r["name"], r["nodes"][0]): r for r in _check_results(final, "Node")}
    failed = by[("burn", "node-001")]
    assert failed["violations"][0] == {
        "index": 0,
        "metric": "miscompares",
        "cause": "Measurement",
        "kind": "Unsatisfied",
        "reason": failed["violations"][0]["reason"],
    }
    assert failed["message"]
    health = by[("health", "node-000")]
    assert health["unmeasurable"] == ["eccErrors"]
    assert health["notEvaluated"] == [
        {"metric": "eccErrors", "reason": "unmeasurable on this hardware"}
    ]
    assert by[("gemm-fp8", "node-000")]["variantAxes"] == {"precision": "fp8"}
    assert "segments" not in failed and "baseline" not in final and "cancelReason" not in final


def test_pair_scope_names_the_link_server_then_client(tmp_path: Path) -> None:
    runner = ScriptedRunner(default="bandwidthGbps=250\nlink slow")
    w = world(2, {"p": PAIR}, [{"testRef": "p"}], runner=runner)
    envelopes = _deliver(w, tmp_path, targets=["node-000", "node-001"], maxConcurrentNodes=2)
    [completed] = [e for e in envelopes if e["reason"] == "TestCompleted"]
    assert completed["deliveryId"] == delivery_id(
        completed["run"]["uid"], "TestCompleted", "p/node-000+node-001"
    )
    assert _terminal(envelopes).keys() >= SOMEWHERE
    [result] = _check_results(_terminal(envelopes), "Pair")
    assert result["nodes"] == ["node-000", "node-001"]
    assert result["metrics"] == {"bandwidthGbps": "250"} and result["phase"] == "Failed"
    assert [v["metric"] for v in result["violations"]] == ["bandwidthGbps"]


def test_group_scope_names_every_rank_in_order(tmp_path: Path) -> None:
    w = world(
        3, {"g": GROUP}, [{"testRef": "g"}], runner=ScriptedRunner(default="busBandwidthGBs=400")
    )
    targets = ["node-000", "node-001", "node-002"]
    envelopes = _deliver(w, tmp_path, targets=targets, maxConcurrentNodes=3)
    [completed] = [e for e in envelopes if e["reason"] == "TestCompleted"]
    assert completed["deliveryId"] == delivery_id(
        completed["run"]["uid"], "TestCompleted", "g/node-000+node-001+node-002"
    )
    assert _terminal(envelopes).keys() >= SOMEWHERE
    [result] = _check_results(_terminal(envelopes), "Group")
    assert result["nodes"] == targets and _terminal(envelopes)["phase"] == "Passed"


def test_segmented_soak_carries_its_segments_and_the_fold(tmp_path: Path) -> None:
    runner = ScriptedRunner(default="elapsedS=300\ngpuTempC=70").on(
        reply("elapsedS=300\ngpuTempC=75"), attempt=2
    )
    w = world(1, {"s": SOAK}, [{"testRef": "s"}], runner=runner)
    envelopes = _deliver(w, tmp_path, targets=["node-000"])
    checkpoints = [e for e in envelopes if e["reason"] == "Checkpoint"]
    assert checkpoints and all(
        e["results"][0]["segments"]["required"] == 3 and e["results"][0]["phase"] == "Running"
        for e in checkpoints
    )
    assert _terminal(envelopes).keys() >= SOMEWHERE
    [result] = _check_results(_terminal(envelopes), "Node")
    assert result["segments"] == {"completed": 3, "required": 3, "segmentSeconds": 300}
    assert result["metrics"]["elapsedS"] == "900" and result["metrics"]["gpuTempC"] == "75"


def test_a_cancelled_run_says_why(tmp_path: Path) -> None:
    w = world(1, {"a": BURN}, [{"testRef": "a"}], runner=ScriptedRunner(default="miscompares=0"))
    envelopes = _deliver(
        w, tmp_path, targets=["node-000"], cancel=True, cancelReason="rack maintenance"
    )
    final = _terminal(envelopes)
    assert final["phase"] == "Cancelled" and final["cancelReason"] == "rack maintenance"


def test_a_baseline_run_is_flagged_on_every_envelope(tmp_path: Path) -> None:
    w = world(1, {"a": spec_of()}, [{"testRef": "a"}], runner=ScriptedRunner(default="ok"))
    envelopes = _deliver(w, tmp_path, targets=["node-000"], baseline=True)
    assert envelopes and all(e["baseline"] is True for e in envelopes)


@pytest.mark.parametrize("reason", ["admission", "resolve"])
def test_a_refused_run_delivers_its_synthetic_result_without_scope(
    tmp_path: Path, reason: str
) -> None:
    w = world(1, {"a": BURN}, [{"testRef": "a" if reason == "admission" else "missing"}])
    if reason == "admission":
        w.submit(run_object("holder", targets=["node-000"]))
        w.engine.reconcile("default", "holder")
    else:
        w.backend.advance_to(600)  # past the resolve grace
    w.backend.profiles["prof"] = w.backend.profiles["prof"].model_copy(
        update={"spec": w.backend.profiles["prof"].spec.model_copy(update={"sinks": ["x"]})}
    )
    envelopes = _deliver(w, tmp_path, targets=["node-000"])
    [synthetic] = _terminal(envelopes)["results"]
    assert synthetic["kind"] == "" and synthetic["name"] == reason
    assert "scope" not in synthetic and "nodes" not in synthetic
