"""Builders of the objects the plan tests start runs from: runs, profiles, tests, nodes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from glimmer.api.pinned import PLAN_ANNOTATION
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.test import BurnInTestSpec
from glimmer.plan.nodes import NodeInfo

API = "burnin.glimmer.ai/v1alpha1"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
FINALIZER = "burnin.glimmer.ai/cordon-cleanup"


def spec(kind: str = "clockprobe", **fields: Any) -> BurnInTestSpec:
    return BurnInTestSpec.model_validate({"kind": kind, **fields})


def gate(metric: str, comparison: str = "GreaterThanOrEqual", value: str = "1") -> dict[str, str]:
    return {"metric": metric, "comparison": comparison, "value": value}


def profile(*entries: dict[str, Any], name: str = "p", **fields: Any) -> BurnInProfile:
    return BurnInProfile.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInProfile",
            "metadata": {"name": name, "namespace": "lab"},
            "spec": {"tests": list(entries), **fields},
        }
    )


def run(
    name: str = "r",
    *,
    nodes: list[str] | None = None,
    selector: dict[str, str] | None = None,
    profile_ref: str = "p",
    uid: str | None = None,
    created: datetime = T0,
    started: datetime | None = None,
    phase: str | None = None,
    finalizer: bool = False,
    plan: str | None = None,
    namespace: str = "lab",
    **spec_fields: Any,
) -> BurnInRun:
    target: dict[str, Any] = {}
    if nodes is not None:
        target["nodeNames"] = nodes
    if selector is not None:
        target["nodeSelector"] = selector
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid or f"uid-{name}",
        "creationTimestamp": created.isoformat(),
        "generation": 1,
    }
    if finalizer:
        metadata["finalizers"] = [FINALIZER]
    if plan is not None:
        metadata["annotations"] = {PLAN_ANNOTATION: plan}
    status: dict[str, Any] = {}
    if phase is not None:
        status["phase"] = phase
    if started is not None:
        status["startedAt"] = started.isoformat()
    return BurnInRun.model_validate(
        {
            "apiVersion": API,
            "kind": "BurnInRun",
            "metadata": metadata,
            "spec": {"profileRef": profile_ref, "target": target, **spec_fields},
            **({"status": status} if status else {}),
        }
    )


def node(name: str, **labels: str) -> NodeInfo:
    return NodeInfo(name=name, labels=labels)


def later(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)
