"""The envelope assembler and the idempotency key, field by field (specs/burnin.md §5.2–§5.3)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import pytest

from glimmer.api.result import ArtifactRef, TestResult
from glimmer.api.run import BurnInRun
from glimmer.contract.vocab import Phase, Scope
from glimmer.sinks.envelope import (
    CHECKPOINT,
    RUN_PHASE_CHANGED,
    TEST_COMPLETED,
    Cluster,
    Transition,
    build_envelope,
    delivery_id,
    result_entry,
    rfc3339,
    validate_envelope,
)
from glimmer.sinks.errors import DeliveryError

AT = datetime(2026, 9, 1, 10, 0, tzinfo=UTC)


def run(phase: str = "Running", uid: str = "a1b2", **spec: Any) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": "burnin.glimmer.ai/v1alpha1",
            "kind": "BurnInRun",
            "metadata": {"name": "accept-1", "namespace": "lab", "uid": uid},
            "spec": {"profileRef": "node-acceptance", "target": {"nodeNames": ["gpu-01"]}, **spec},
            "status": {"phase": phase},
        }
    )


def envelope(reason: str = RUN_PHASE_CHANGED, key: str = "Running", **kw: Any) -> dict[str, Any]:
    return build_envelope(Transition(reason, key, kw.pop("r", run())), sent_at=AT, **kw)


def test_delivery_id_is_sha256_of_uid_reason_key_truncated_to_16_bytes() -> None:
    expected = hashlib.sha256(b"a1b2\x00TestCompleted\x00burn/gpu-01").hexdigest()[:32]
    assert delivery_id("a1b2", "TestCompleted", "burn/gpu-01") == expected
    assert delivery_id("a1b2", "TestCompleted", "burn/gpu-01") == expected  # pure
    assert delivery_id("a1b2", "TestCompleted", "burn/gpu-02") != expected
    assert delivery_id("a1b3", "TestCompleted", "burn/gpu-01") != expected


def test_a_running_envelope_has_the_always_present_fields_and_nothing_empty() -> None:
    env = envelope()
    assert env == {
        "version": "burnin.glimmer.ai/v1alpha1",
        "deliveryId": delivery_id("a1b2", "RunPhaseChanged", "Running"),
        "reason": "RunPhaseChanged",
        "sentAt": "2026-09-01T10:00:00Z",
        "run": {
            "namespace": "lab",
            "name": "accept-1",
            "uid": "a1b2",
            "profile": "node-acceptance",
        },
        "phase": "Running",
        "summary": {"passed": 0, "failed": 0, "errored": 0, "skipped": 0},
    }


def test_cancel_reason_only_on_a_cancelled_run() -> None:
    r = run("Cancelled", cancel=True, cancelReason="rack maintenance")
    assert envelope(key="Cancelled", r=r)["cancelReason"] == "rack maintenance"
    assert "cancelReason" not in envelope(r=run("Running", cancelReason="x"))
    assert "cancelReason" not in envelope(key="Cancelled", r=run("Cancelled", cancel=True))


def test_checkpoint_sequence_only_on_checkpoints_and_never_zero() -> None:
    seq = build_envelope(Transition(CHECKPOINT, "3", run(), sequence=3), sent_at=AT)
    assert seq["checkpointSequence"] == 3
    zero = build_envelope(Transition(CHECKPOINT, "0", run(), sequence=0), sent_at=AT)
    assert "checkpointSequence" not in zero
    other = build_envelope(Transition(TEST_COMPLETED, "a/n", run(), sequence=3), sent_at=AT)
    assert "checkpointSequence" not in other


def test_cluster_is_left_out_unless_known_and_baseline_only_when_true() -> None:
    assert "cluster" not in envelope(cluster=Cluster())
    assert envelope(cluster=Cluster(name="east"))["cluster"] == {"name": "east"}
    assert "baseline" not in envelope()
    baseline = build_envelope(Transition(RUN_PHASE_CHANGED, "Running", run(), True), sent_at=AT)
    assert baseline["baseline"] is True


def test_a_result_entry_keeps_kind_and_phase_and_omits_empty_fields() -> None:
    synthetic = TestResult(name="resolve", kind="", phase=Phase.ERROR, message="not found")
    assert result_entry(synthetic) == {
        "name": "resolve",
        "kind": "",
        "phase": "Error",
        "message": "not found",
    }


def test_a_result_entry_carries_artifacts_and_segments_but_never_attempts() -> None:
    result = TestResult.model_validate(
        {
            "name": "soak",
            "kind": "thermal-soak",
            "scope": Scope.NODE,
            "phase": Phase.PASSED,
            "nodes": ["gpu-01"],
            "segmentsRequired": 4,
            "segmentsCompleted": 4,
            "segmentSeconds": 300,
            "truncatedAttempts": 2,
            "artifacts": [
                ArtifactRef(name="curve", media_type="text/csv", size_bytes=12, digest="sha256:x"),
                ArtifactRef(name="big", dropped="over 256 KiB"),
            ],
            "attempts": [{"attempt": 1, "trigger": "Initial", "phase": "Passed"}],
        }
    )
    entry = result_entry(result)
    assert entry["segments"] == {
        "completed": 4,
        "required": 4,
        "segmentSeconds": 300,
        "truncatedAttempts": 2,
    }
    assert entry["artifacts"] == [
        {"name": "curve", "mediaType": "text/csv", "sizeBytes": 12, "digest": "sha256:x"},
        {"name": "big", "dropped": "over 256 KiB"},
    ]
    assert "attempts" not in entry and "repeatsRequired" not in entry


def test_times_are_utc_to_the_second() -> None:
    assert rfc3339(datetime(2026, 1, 2, 3, 4, 5, 999_000)) == "2026-01-02T03:04:05Z"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"version": "burnin.glimmer.ai/v2"}, "version"),
        ({"deliveryId": ""}, "deliveryId"),
        ({"reason": ""}, "reason"),
        ({"run": {"namespace": "lab", "name": "x", "uid": ""}}, "run.uid"),
        ({"sentAt": ""}, "sentAt"),
        (
            {
                "results": [
                    {"name": "a", "kind": "k", "phase": "Passed", "metrics": {"bad_name": "1"}}
                ]
            },
            "bad_name",
        ),
    ],
)
def test_an_invalid_envelope_is_refused_permanently(change: dict[str, Any], words: str) -> None:
    env = {**envelope(), **change}
    with pytest.raises(DeliveryError) as err:
        validate_envelope(env)
    assert err.value.permanent and words in str(err.value)
    validate_envelope(envelope())
