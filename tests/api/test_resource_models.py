"""The six kinds: defaults, wire names, rules between fields, and nothing lost on the way."""

from __future__ import annotations

from typing import Any, get_args

import pytest
from pydantic import ValidationError

from glimmer.api.dump import to_wire
from glimmer.api.fingerprint import NodeFingerprint
from glimmer.api.profile import BurnInProfile, ProfileTest
from glimmer.api.run import BurnInRun, BurnInRunSpec, CancelPolicy
from glimmer.api.schedule import BurnInSchedule, ConcurrencyPolicy
from glimmer.api.sink import BurnInSink, SinkType
from glimmer.api.test import BurnInTest, BurnInTestSpec, HostPathMount, Vendor
from glimmer.contract.vocab import ACCELERATOR_VENDORS, Phase, Scope

API = "burnin.glimmer.ai/v1alpha1"


def _obj(kind: str, spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": "x"}, "spec": spec, **extra}


def test_a_test_spec_takes_its_documented_defaults() -> None:
    spec = BurnInTestSpec.model_validate({"kind": "gpu-burn"})
    assert spec.scope is Scope.NODE
    assert spec.repeat_count == 1
    assert spec.duration_seconds == 0  # 0: the kind's default
    assert spec.host_network is False
    assert spec.thresholds is None


def test_host_paths_are_read_only_unless_they_say_otherwise() -> None:
    mount = HostPathMount.model_validate({"path": "/sys", "mountPath": "/host/sys"})
    assert mount.read_only is True


def test_a_null_on_a_defaulted_field_reads_as_unset_like_the_api_server_prunes_it() -> None:
    spec = BurnInTestSpec.model_validate({"kind": "gpu-burn", "repeatCount": None, "scope": None})
    assert spec.repeat_count == 1
    assert spec.scope is Scope.NODE
    assert "repeatCount" not in to_wire(spec)


def test_fields_are_camel_case_on_the_wire_and_snake_case_in_python() -> None:
    by_alias = BurnInTestSpec.model_validate({"kind": "nccl", "hostNetwork": True})
    by_name = BurnInTestSpec(kind="nccl", host_network=True)
    assert by_alias == by_name
    assert to_wire(by_name) == {"kind": "nccl", "hostNetwork": True}


def test_the_vendor_enum_is_the_contract_vendor_list() -> None:
    assert get_args(Vendor) == ACCELERATOR_VENDORS


def test_a_profile_entry_is_a_test_ref_xor_an_inline_test() -> None:
    assert ProfileTest.model_validate({"testRef": "a"}).required is True
    with pytest.raises(ValidationError, match="not both"):
        ProfileTest.model_validate({"testRef": "a", "inline": {"kind": "custom"}})
    with pytest.raises(ValidationError, match="neither"):
        ProfileTest.model_validate({"required": False})


def test_profile_entries_are_named_after_their_test_or_their_inline_position() -> None:
    profile = BurnInProfile.model_validate(
        _obj("BurnInProfile", {"tests": [{"testRef": "clocks"}, {"inline": {"kind": "nccl"}}]})
    )
    names = [entry.entry_name(i) for i, entry in enumerate(profile.spec.tests)]
    assert names == ["clocks", "inline-1-nccl"]


def test_an_empty_variant_threshold_list_is_kept_apart_from_an_absent_one() -> None:
    profile = BurnInProfile.model_validate(
        _obj(
            "BurnInProfile",
            {
                "tests": [
                    {
                        "testRef": "t",
                        "variants": [{"name": "explore", "thresholds": []}, {"name": "inherit"}],
                    }
                ]
            },
        )
    )
    variants = profile.spec.tests[0].variants or []
    assert variants[0].thresholds == []
    assert variants[1].thresholds is None


def test_a_run_takes_its_documented_defaults() -> None:
    spec = BurnInRunSpec.model_validate({"profileRef": "p", "target": {"nodeNames": ["a"]}})
    assert spec.max_concurrent_nodes == 1
    assert spec.retry_on_error_limit == 0
    assert (spec.force, spec.suspend, spec.baseline, spec.cancel) == (False, False, False, False)
    assert spec.cancel_policy is CancelPolicy.GRACEFUL


def test_a_schedule_takes_its_documented_defaults() -> None:
    sched = BurnInSchedule.model_validate(
        _obj("BurnInSchedule", {"schedule": "@every 168h", "profileRef": "p", "target": {}})
    )
    assert sched.spec.concurrency_policy is ConcurrencyPolicy.FORBID
    assert sched.spec.successful_runs_history_limit == 3
    assert sched.spec.failed_runs_history_limit == 10
    assert sched.spec.suspend is False


def test_a_sink_needs_the_configuration_of_its_type() -> None:
    prom = BurnInSink.model_validate(_obj("BurnInSink", {"type": "Prometheus"}))
    assert prom.spec.type is SinkType.PROMETHEUS
    with pytest.raises(ValidationError, match=r"spec\.configMap"):
        BurnInSink.model_validate(_obj("BurnInSink", {"type": "ConfigMap"}))


RUN_WITH_STATUS: dict[str, Any] = _obj(
    "BurnInRun",
    {"profileRef": "acceptance", "target": {"nodeNames": ["gpu-01", "gpu-02"]}},
    status={
        "phase": "Failed",
        "fingerprint": {"gpu-01": "kernel=6.8 os=ubuntu arch=arm64"},
        "startedAt": "2026-08-20T10:00:00Z",
        "finishedAt": "2026-08-20T10:20:00Z",
        "passed": 1,
        "failed": 1,
        "cordonedNodes": [],
        "priorUnschedulable": {"gpu-01": False, "gpu-02": True},
        "observedGeneration": 2,
        "conditions": [
            {
                "type": "Admitted",
                "status": "True",
                "reason": "TargetsAvailable",
                "message": "",
                "lastTransitionTime": "2026-08-20T10:00:00Z",
            }
        ],
        "results": [
            {"name": "resolve", "phase": "Error", "message": "synthetic, no scope, no kind"},
            {
                "name": "sustained-clock",
                "kind": "clockprobe",
                "scope": "Node",
                "phase": "Failed",
                "nodes": ["gpu-01"],
                "metrics": {"sustainedClockPct": "41.2"},
                "message": "sustainedClockPct 41.2 < 70",
                "violations": [
                    {
                        "index": 0,
                        "metric": "sustainedClockPct",
                        "cause": "Violated",
                        "kind": "Bound",
                        "reason": "41.2 < 70",
                    }
                ],
                "notEvaluated": [
                    {"metric": "eccErrors", "reason": "unmeasurable on this hardware"}
                ],
                "unmeasurable": ["eccErrors"],
                "artifacts": [
                    {"name": "log", "mediaType": "text/plain", "sizeBytes": 10, "dropped": ""}
                ],
                "repeatsRequired": 1,
                "repeatsCompleted": 1,
                "attempts": [
                    {
                        "attempt": 1,
                        "trigger": "Initial",
                        "node": "gpu-01",
                        "podName": "run-sustained-clock-gpu-01-1",
                        "phase": "Failed",
                        "exitCode": 0,
                        "startedAt": "2026-08-20T10:01:00Z",
                        "metrics": {"sustainedClockPct": "41.2"},
                    }
                ],
            },
        ],
    },
)


def test_a_run_status_loads_and_dumps_back_unchanged() -> None:
    run = BurnInRun.model_validate(RUN_WITH_STATUS)
    assert run.status is not None and run.status.phase is Phase.FAILED
    results = run.status.results or []
    assert results[0].synthetic and results[0].scope is None
    assert not results[1].synthetic
    assert to_wire(run) == RUN_WITH_STATUS


def test_a_fingerprint_status_loads_and_dumps_back_unchanged() -> None:
    data = _obj(
        "NodeFingerprint",
        {"nodeName": "gpu-01"},
        status={
            "capturedAt": "2026-08-20T10:00:00Z",
            "gpus": [{"index": 0, "vendor": "nvidia", "model": "GB10", "memoryBytes": 1 << 37}],
            "nics": [{"name": "enp1s0f0", "role": "fabric", "speedMbps": 200000, "mtu": 9000}],
            "digest": "v1:abc",
            "labels": {"nvidia.com/gpu.product": "GB10"},
        },
    )
    assert to_wire(NodeFingerprint.model_validate(data)) == data


def test_unknown_metadata_and_carried_kubernetes_fields_are_kept() -> None:
    data = _obj(
        "BurnInTest",
        {
            "kind": "nccl",
            "runner": {
                "env": [
                    {"name": "NODE_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}
                ],
                "readinessProbe": {"tcpSocket": {"port": 5201}, "periodSeconds": 2},
            },
            "resources": {"limits": {"nvidia.com/gpu": 8, "memory": "64Gi"}, "futureField": 1},
        },
    )
    data["metadata"] = {
        "name": "x",
        "namespace": "lab",
        "labels": {"a": "b"},
        "managedFields": [{"manager": "kubectl"}],
        "someFutureKey": {"kept": True},
    }
    assert to_wire(BurnInTest.model_validate(data)) == data


def test_the_envelope_must_match_the_model() -> None:
    with pytest.raises(ValidationError, match="kind must be BurnInTest"):
        BurnInTest.model_validate(_obj("BurnInRun", {"kind": "x"}))
