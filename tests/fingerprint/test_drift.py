"""Scenario 58 of specs/burnin.md §11.2 and the rest of §7.2: a v1 digest over the salient
identity; a kernel upgrade raises a sticky Drifted=True/DigestChanged with a HardwareDrift event;
operator/verdict labels and a digest scheme change do not; capturedAt moves only when the
identity changes; a human acknowledges drift; drift never creates runs."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from fingerprint_world import T0, node

from glimmer.api.fingerprint import NodeFingerprint
from glimmer.api.k8s import Condition
from glimmer.fingerprint.digest import canonical, digest
from glimmer.fingerprint.identity import Gpu, Identity
from glimmer.fingerprint.keys import ACKNOWLEDGED_DIGEST, NODE_LABEL
from glimmer.fingerprint.node_object import from_node
from glimmer.fingerprint.reconcile import Observation, observe

HOUR = timedelta(hours=1)


def drifted(obs: Observation) -> Condition:
    status = obs.fingerprint.status
    assert status is not None
    (found,) = [c for c in status.conditions or () if c.type == "Drifted"]
    return found


def step(previous: NodeFingerprint | None, obj: dict[str, object], at_hours: float) -> Observation:
    return observe(previous, "gpu-01", from_node(obj), T0 + at_hours * HOUR, namespace="glimmer")


def test_first_capture_is_a_baseline_with_a_v1_digest() -> None:
    obs = step(None, node(), 0)
    fp = obs.fingerprint
    assert obs.changed and not obs.events and not obs.drifted
    assert fp.name == "gpu-01" and fp.metadata.namespace == "glimmer"
    assert fp.metadata.labels == {NODE_LABEL: "gpu-01"}
    assert fp.spec.node_name == "gpu-01"
    status = fp.status
    assert status is not None and status.digest is not None
    assert re.fullmatch(r"v1:[0-9a-f]{64}", status.digest)
    assert status.kernel == "6.11.0-1016-nvidia" and status.os_image == "Ubuntu 24.04.2 LTS"
    assert status.gpus is not None and status.gpus[0].vendor == "nvidia"
    assert status.nics is not None and status.nics[0].name == "enp1s0f0"
    assert status.captured_at == T0
    c = drifted(obs)
    assert (c.status, c.reason) == ("False", "BaselineCaptured")


def test_stable_observation_changes_nothing_and_keeps_captured_at() -> None:
    first = step(None, node(), 0)
    again = step(first.fingerprint, node(), 5)
    assert again.changed  # the condition's reason moves from BaselineCaptured to DigestStable
    assert again.fingerprint.status is not None
    assert again.fingerprint.status.captured_at == T0
    c = drifted(again)
    assert (c.status, c.reason) == ("False", "DigestStable")
    third = step(again.fingerprint, node(), 9)
    assert not third.changed and not third.events


def test_kernel_upgrade_raises_sticky_drift_with_an_event() -> None:
    base = step(None, node(), 0).fingerprint
    upgraded = step(base, node(kernel="6.14.0-1001-nvidia"), 1)
    c = drifted(upgraded)
    assert (c.status, c.reason) == ("True", "DigestChanged")
    assert "kernel 6.11.0-1016-nvidia → 6.14.0-1001-nvidia" in c.message
    (event,) = upgraded.events
    assert (event.type, event.reason, event.node) == ("Warning", "HardwareDrift", "gpu-01")
    assert upgraded.fingerprint.status is not None
    assert upgraded.fingerprint.status.captured_at == T0 + HOUR
    # Sticky: stable observations afterwards keep it True, with no new event.
    later = step(upgraded.fingerprint, node(kernel="6.14.0-1001-nvidia"), 2)
    assert drifted(later).status == "True" and drifted(later).reason == "DigestChanged"
    assert drifted(later).last_transition_time == T0 + HOUR
    assert not later.events and not later.changed
    # Even going back to the old kernel does not clear it (that is another change).
    back = step(later.fingerprint, node(), 3)
    assert drifted(back).status == "True" and len(back.events) == 1


def test_operator_and_verdict_labels_never_cause_drift() -> None:
    base = step(None, node(), 0).fingerprint
    labelled = node()
    labels = labelled["metadata"]["labels"]
    labels["burnin.glimmer.ai/last-verdict"] = "Failed"
    labels["burnin.glimmer.ai/gpu.count"] = "7"
    labels["example.com/gpu-burnin-result"] = "fail"
    labels["kubernetes.io/hostname"] = "renamed"
    obs = step(base, labelled, 1)
    assert drifted(obs).status == "False" and not obs.events
    assert base.status is not None and obs.fingerprint.status is not None
    assert obs.fingerprint.status.digest == base.status.digest


def test_a_hardware_label_change_is_drift_named_in_the_message() -> None:
    base = step(None, node(), 0).fingerprint
    changed = node()
    labels = changed["metadata"]["labels"]
    labels["nvidia.com/gpu.count"] = "0"
    labels["nvidia.com/mig.strategy"] = "single"
    obs = step(base, changed, 1)
    message = drifted(obs).message
    assert "label nvidia.com/gpu.count 1 → 0" in message
    assert "label nvidia.com/mig.strategy=single added" in message
    assert "gpus 1×nvidia NVIDIA-GB10 sm_121" in message and "→ none" in message


def test_a_digest_scheme_change_is_never_drift() -> None:
    base = step(None, node(), 0).fingerprint
    assert base.status is not None
    old_scheme = base.model_copy(
        update={"status": base.status.model_copy(update={"digest": "v0:" + "0" * 64})}
    )
    obs = step(old_scheme, node(), 1)
    c = drifted(obs)
    assert (c.status, c.reason) == ("False", "DigestSchemeChanged") and not obs.events
    assert obs.fingerprint.status is not None
    assert obs.fingerprint.status.digest == base.status.digest
    assert obs.fingerprint.status.captured_at == T0  # the identity did not change
    # Next time it is simply stable.
    assert drifted(step(obs.fingerprint, node(), 2)).reason == "DigestStable"


def test_a_scheme_change_does_not_clear_an_existing_drift() -> None:
    base = step(None, node(), 0).fingerprint
    drift = step(base, node(kernel="7.0"), 1).fingerprint
    assert drift.status is not None
    renamed = drift.model_copy(
        update={"status": drift.status.model_copy(update={"digest": "v2:" + "f" * 64})}
    )
    assert drifted(step(renamed, node(kernel="7.0"), 2)).status == "True"


def _acknowledge(fp: NodeFingerprint, value: str) -> NodeFingerprint:
    meta = fp.metadata.model_copy(update={"annotations": {ACKNOWLEDGED_DIGEST: value}})
    return fp.model_copy(update={"metadata": meta})


def test_acknowledging_the_current_digest_ends_the_drift() -> None:
    base = step(None, node(), 0).fingerprint
    drift = step(base, node(kernel="7.0"), 1).fingerprint
    assert drift.status is not None and drift.status.digest is not None
    stale = step(_acknowledge(drift, "v1:" + "0" * 64), node(kernel="7.0"), 2)
    assert drifted(stale).status == "True"  # a different digest acknowledges nothing
    acked = step(_acknowledge(drift, drift.status.digest), node(kernel="7.0"), 2)
    c = drifted(acked)
    assert (c.status, c.reason) == ("False", "DriftAcknowledged")
    # The acknowledgement covers that digest only: a further change is drift again.
    again = step(acked.fingerprint, node(kernel="7.1"), 3)
    assert drifted(again).status == "True" and len(again.events) == 1


def test_a_change_acknowledged_in_advance_is_not_drift() -> None:
    base = step(None, node(), 0).fingerprint
    planned = digest(from_node(node(kernel="7.0")))
    obs = step(_acknowledge(base, planned), node(kernel="7.0"), 1)
    assert drifted(obs).reason == "DriftAcknowledged" and not obs.events


def test_deleting_the_fingerprint_rebaselines() -> None:
    drift = step(step(None, node(), 0).fingerprint, node(kernel="7.0"), 1)
    assert drift.drifted
    fresh = step(None, node(kernel="7.0"), 2)
    assert drifted(fresh).reason == "BaselineCaptured"


def test_an_object_of_another_node_is_left_alone() -> None:
    other = step(None, node(), 0).fingerprint
    obs = observe(other, "gpu-02", from_node(node("gpu-02")), T0)
    assert obs.conflict is not None and "gpu-01" in obs.conflict
    assert not obs.changed and obs.fingerprint is other


def test_observation_carries_no_run_and_observe_needs_an_aware_time() -> None:
    # Drift is reported, never acted on: the result is a fingerprint and events, nothing else.
    assert set(Observation.__dataclass_fields__) == {"fingerprint", "changed", "events", "conflict"}
    with pytest.raises(ValueError, match="aware"):
        observe(None, "gpu-01", Identity(), T0.replace(tzinfo=None))


def test_digest_is_sha256_of_canonical_json_and_ignores_order() -> None:
    a = Identity.of(labels={"b": "2", "a": "1"}, gpus=[Gpu(0, "nvidia", "X")])
    b = Identity.of(labels={"a": "1", "b": "2"}, gpus=[Gpu(5, "nvidia", "X")])
    assert digest(a) == digest(b)
    assert canonical(a).startswith(b'{"gpus":[{"arch":""')
    assert b'"scheme":"v1"' in canonical(a)
    assert digest(a) != digest(Identity.of(labels={"a": "1"}, gpus=[Gpu(0, "nvidia", "X")]))


def test_at_most_64_gpus_enter_the_identity() -> None:
    ident = Identity.of(gpus=[Gpu(i, "nvidia", "X") for i in range(100)])
    assert len(ident.gpus) == 64 and ident.gpus[-1].index == 63
