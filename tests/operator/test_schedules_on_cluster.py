"""The BurnInSchedule reconciler over HTTP against the API stand-in (§7.1, scenario 57 on a
cluster): a due tick writes the cursor through the status subresource BEFORE the run is
created; the run carries the schedule's label, tick annotation, controller owner reference and
template; a second reconcile creates nothing; Forbid skips while a run is active and counts
the miss; finished runs beyond the history limit are deleted; and through kopf the schedule's
daemon fires on the cluster clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import kopf
import pytest
from kopf.testing import KopfRunner
from lightkube import Client

from glimmer.api.run import BurnInRunStatus
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.backends.kubernetes.resources import RUNS
from glimmer.contract.vocab import Phase
from glimmer.operator.context import OperatorContext
from glimmer.operator.schedules import SCHEDULES, reconcile_schedule, register
from glimmer.schedule.keys import SCHEDULE_LABEL, SCHEDULED_AT_ANNOTATION
from tests.k8s_api import K8sAPI
from tests.operator.operator_objects import eventually
from tools.k8s_standin.journal import read

NS = "default"


@pytest.fixture
def client(k8s_api: K8sAPI) -> Client:
    return connect(k8s_api.kubeconfig)


@pytest.fixture
def backend(client: Client) -> KubernetesBackend:
    return KubernetesBackend(client)


def make_schedule(client: Client, name: str = "nightly", **spec: Any) -> dict[str, Any]:
    body = {
        "apiVersion": "burnin.glimmer.ai/v1alpha1",
        "kind": "BurnInSchedule",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "schedule": "0 3 * * *",
            "profileRef": "host",
            "target": {"nodeNames": ["node-a"]},
            **spec,
        },
    }
    made: dict[str, Any] = client.create(SCHEDULES.from_dict(body), namespace=NS).to_dict()
    return made


def created_at(schedule: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(schedule["metadata"]["creationTimestamp"].replace("Z", "+00:00"))


def next_three_am(after: datetime) -> datetime:
    tick = after.astimezone(UTC).replace(hour=3, minute=0, second=0, microsecond=0)
    return tick if tick > after else tick + timedelta(days=1)


def runs(client: Client) -> list[dict[str, Any]]:
    return [r.to_dict() for r in client.list(RUNS, namespace=NS)]


def schedule_status(client: Client, name: str = "nightly") -> dict[str, Any]:
    found: dict[str, Any] = client.get(SCHEDULES, name, namespace=NS).to_dict()["status"]
    return found


def test_a_due_tick_writes_the_cursor_first_then_creates_one_owned_run(
    k8s_api: K8sAPI, client: Client, backend: KubernetesBackend
) -> None:
    schedule = make_schedule(client, runTemplate={"maxConcurrentNodes": 2, "deadlineSeconds": 600})
    tick = next_three_am(created_at(schedule))
    decision = reconcile_schedule(backend, NS, "nightly", tick + timedelta(minutes=1))
    assert decision is not None and decision.fired == tick
    [made] = runs(client)
    meta = made["metadata"]
    assert meta["labels"][SCHEDULE_LABEL] == "nightly"
    assert meta["annotations"][SCHEDULED_AT_ANNOTATION] == tick.strftime("%Y-%m-%dT%H:%M:%SZ")
    [owner] = meta["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == (
        "BurnInSchedule",
        "nightly",
        True,
    )
    assert owner["uid"] == schedule["metadata"]["uid"]
    assert made["spec"]["maxConcurrentNodes"] == 2
    assert made["spec"]["deadlineSeconds"] == 600
    assert made["spec"]["target"] == {"nodeNames": ["node-a"]}
    status = schedule_status(client)
    assert status["lastRunName"] == meta["name"]
    assert status["lastRunPhase"] == "Pending"
    assert [a["name"] for a in status["active"]] == [meta["name"]]
    valid = next(c for c in status["conditions"] if c["type"] == "ScheduleValid")
    assert (valid["status"], valid["reason"]) == ("True", "Parsed")
    # The order on the wire: the cursor's status write, then the run's create.
    writes = [
        (e["verb"], e["resource"])
        for e in read(k8s_api.journal)
        if e.get("verb") in ("create", "update") and e.get("group") == "burnin.glimmer.ai"
    ]
    assert writes.index(("update", "burninschedules/status")) < writes.index(
        ("create", "burninruns")
    )


def test_reconciling_the_same_moment_again_creates_nothing(
    client: Client, backend: KubernetesBackend
) -> None:
    tick = next_three_am(created_at(make_schedule(client)))
    reconcile_schedule(backend, NS, "nightly", tick + timedelta(minutes=1))
    again = reconcile_schedule(backend, NS, "nightly", tick + timedelta(minutes=2))
    assert again is not None and again.fired is None
    assert len(runs(client)) == 1


def test_forbid_skips_a_tick_while_an_owned_run_is_active_and_counts_it_missed(
    client: Client, backend: KubernetesBackend
) -> None:
    tick = next_three_am(created_at(make_schedule(client)))
    reconcile_schedule(backend, NS, "nightly", tick + timedelta(minutes=1))
    later = reconcile_schedule(backend, NS, "nightly", tick + timedelta(days=1, minutes=1))
    assert later is not None and later.skipped == tick + timedelta(days=1)
    assert len(runs(client)) == 1
    assert schedule_status(client)["missedSchedules"] == 1


def test_allow_creates_beside_an_active_run(client: Client, backend: KubernetesBackend) -> None:
    tick = next_three_am(created_at(make_schedule(client, concurrencyPolicy="Allow")))
    reconcile_schedule(backend, NS, "nightly", tick + timedelta(minutes=1))
    reconcile_schedule(backend, NS, "nightly", tick + timedelta(days=1, minutes=1))
    assert len(runs(client)) == 2


def test_passed_runs_beyond_the_history_limit_are_deleted_oldest_first(
    client: Client, backend: KubernetesBackend
) -> None:
    tick = next_three_am(
        created_at(make_schedule(client, concurrencyPolicy="Allow", successfulRunsHistoryLimit=1))
    )
    names = []
    for day in range(2):
        at = tick + timedelta(days=day, minutes=1)
        decision = reconcile_schedule(backend, NS, "nightly", at)
        assert decision is not None and decision.created is not None
        names.append(decision.created.name)
        stored = backend.get_run(NS, decision.created.name)
        assert stored is not None
        backend.write_status(
            stored, BurnInRunStatus(phase=Phase.PASSED, finished_at=at + timedelta(minutes=30))
        )
    reconcile_schedule(backend, NS, "nightly", tick + timedelta(days=1, hours=2))
    assert [r["metadata"]["name"] for r in runs(client)] == [names[1]]
    status = schedule_status(client)
    assert status["lastSuccessfulTime"].startswith((tick + timedelta(days=1)).strftime("%Y-%m-%d"))


def test_a_schedule_that_is_gone_is_nothing_to_do(backend: KubernetesBackend) -> None:
    assert reconcile_schedule(backend, NS, "nowhere") is None


class Fast:
    """100 cluster seconds per host second, from now (the daemon sleeps in host seconds)."""

    scale = 100.0

    def __init__(self) -> None:
        self.origin = datetime.now(UTC)

    def now(self) -> datetime:
        return self.from_host(datetime.now(UTC))

    def from_host(self, moment: datetime) -> datetime:
        return self.origin + (moment - self.origin) * self.scale

    def host_seconds(self, seconds: float) -> float:
        return seconds / self.scale


def test_through_kopf_the_schedule_daemon_fires_on_the_cluster_clock(
    k8s_api: K8sAPI, client: Client
) -> None:
    context = OperatorContext.over(KubernetesBackend(client, clock=Fast()), NS, identity="test")
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry)(kopf.login_with_kubeconfig)
    register(registry, context)
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    runner = KopfRunner(
        ["run", "--standalone", "--all-namespaces"],
        registry=registry,
        settings=settings,
        timeout=60,
    )
    with runner as kopf_run:
        make_schedule(client, schedule="@every 5m")
        eventually(lambda: runs(client), "a run fired by the schedule's daemon")
        eventually(lambda: schedule_status(client).get("lastRunName"), "the schedule's status")
    assert kopf_run.exit_code == 0, kopf_run.output
    made = runs(client)
    # Forbid (the default): the first run is still active, so no second one was started.
    assert len(made) == 1
    assert made[0]["metadata"]["labels"][SCHEDULE_LABEL] == "nightly"
    # Nothing of kopf's is kept on the schedule: deleting it never waits for an operator.
    schedule = client.get(SCHEDULES, "nightly", namespace=NS).to_dict()["metadata"]
    assert "finalizers" not in schedule
    assert not any(k.startswith("kopf.zalando.org") for k in schedule.get("annotations") or {})
