"""A ReportExport survives its operator dying at any step (specs/certify.md §2.9): the
controllers are killed before and after each of their writes and each POST — the write
landed or not, the answer lost — then restarted with nothing but what the API holds. Each
time: one export per Certification, every POST the receiver saw carries the same bytes (the
persisted snapshot, its recorded sha256) and the same idempotency key, and the attempt count
never falls behind the POSTs (at most the one counted before a POST that never left).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from glimmer.operator.certify.report_export import ExportController
from glimmer.operator.certify.report_export_delivery import Answer, post
from glimmer.operator.certify.report_export_policy import PolicyController
from glimmer.operator.certify.workflow_cluster import Cluster, Kind, Obj
from tests.operator.certify.conftest import NS
from tests.operator.certify.report_export_harness import (
    CLUSTER_ID,
    Exports,
    exports,
    finished_certification,
    policy,
    receiver,
    sha256,
)

__all__ = ["exports", "receiver"]  # the fixtures these tests use


class Killed(BaseException):
    """The process died here (a BaseException: no ``except Exception`` of the code catches it)."""


class Fate:
    """Kills at the ``at``-th step (a write or a POST), before it or after it."""

    def __init__(self, at: int, after: bool) -> None:
        self.at, self.after, self.steps = at, after, 0

    def step(self, run: Any) -> Any:
        self.steps += 1
        if self.steps == self.at and not self.after:
            raise Killed
        out = run()
        if self.steps == self.at:
            raise Killed
        return out


class Dying(Cluster):
    """A Cluster whose writes go through a :class:`Fate`."""

    def __init__(self, inner: Cluster, fate: Fate) -> None:
        super().__init__(inner.client)
        self.fate = fate

    def create(self, kind: Kind, body: Mapping[str, Any], namespace: str | None) -> Obj:
        made: Obj = self.fate.step(lambda: super(Dying, self).create(kind, body, namespace))
        return made

    def write_status(self, kind: Kind, body: Mapping[str, Any]) -> Obj:
        made: Obj = self.fate.step(lambda: super(Dying, self).write_status(kind, body))
        return made

    def delete(self, kind: Kind, name: str, namespace: str | None, uid: str = "") -> bool:
        done: bool = self.fate.step(
            lambda: super(Dying, self).delete(kind, name, namespace, uid=uid)
        )
        return done


def _run(ex: Exports, cluster: Cluster, poster: Any, policy_name: str) -> None:
    """The operator's work for one policy until every export it made is finished."""
    policies = PolicyController(cluster, ex.clock.now, lambda: CLUSTER_ID)
    controller = ExportController(cluster, ex.clock.now, allow_plain_http=True, poster=poster)
    for _ in range(40):
        policies.reconcile(NS, policy_name)
        mine = [
            e
            for e in ex.api.items("reportexports")
            if e["spec"]["policyRef"]["name"] == policy_name
        ]
        waits = [controller.reconcile(NS, e["metadata"]["name"]) for e in mine]
        phases = {
            (ex.api.get("reportexports", e["metadata"]["name"]) or {})
            .get("status", {})
            .get("phase")
            for e in mine
        }
        if mine and phases <= {"Succeeded"}:
            return
        ex.clock.advance(max([w for w in waits if w] or [1.0]))
    raise AssertionError(f"policy {policy_name}'s exports never finished")


# A delivery whose first POST gets a 500: the registration, Snapshotting, the snapshot, Pending,
# Delivering, POST, Pending, Delivering, POST, Succeeded.
STEPS = 10


@pytest.mark.parametrize("after", [False, True], ids=["before", "after"])
def test_a_kill_at_any_step_never_changes_the_payload_nor_loses_an_attempt(
    exports: Exports, after: bool
) -> None:
    for at in range(1, STEPS + 1):
        name = f"k{at}"
        finished_certification(exports.api, name, exports.clock.now(), labels={"run": name})
        policy(
            exports.api, exports.receiver.url, name=name, selector={"matchLabels": {"run": name}}
        )
        exports.receiver.script = ["500"]
        fate = Fate(at, after)
        dying = Dying(exports.cluster, fate)

        def poster(*args: Any, fate: Fate = fate) -> Answer:
            answer: Answer = fate.step(lambda: post(*args))
            return answer

        with pytest.raises(Killed):
            _run(exports, dying, poster, name)
        # Restarted: fresh controllers over the same API, nothing carried over.
        _run(exports, exports.cluster, post, name)

        [export] = [
            e for e in exports.api.items("reportexports") if e["spec"]["policyRef"]["name"] == name
        ]
        status = export["status"]
        seen = [s for s in exports.receiver.requests if s.key == status["reportID"]]
        snapshot = exports.api.configmap(status["snapshotRef"]["name"])
        assert snapshot is not None
        persisted = snapshot["data"][status["snapshotRef"]["key"]].encode()
        assert {s.body for s in seen} == {persisted}, f"kill at step {at}"
        assert sha256(persisted) == status["sha256"]
        assert len(seen) <= status["attempts"] <= len(seen) + 1, f"kill at step {at}"
        assert status["phase"] == "Succeeded"
