"""Scenario 27 over HTTP: the orphan-cordon reaper against the API stand-in. A stamp naming a
deleted run, or a same-name run recreated under another UID, is removed and the node restored
to its stamped prior state; a live run's stamp, an unparseable stamp and an unstamped node are
left alone; a failed read of the run is never taken for its absence."""

from __future__ import annotations

import pytest
from lightkube import Client

from glimmer.api.run import BurnInRun
from glimmer.backends.kubernetes.backend import KubernetesBackend
from glimmer.backends.kubernetes.client import connect
from glimmer.engine.backend import BackendError, NotFound
from glimmer.engine.keys import CORDON_OWNER, HEAT_EXPECTED, PRIOR_UNSCHEDULABLE
from glimmer.operator.reaper import (
    ALIVE,
    REAPED,
    REPOLL_SECONDS,
    UNREADABLE,
    UNSTAMPED,
    reap_node,
)
from tests.k8s_api import K8sAPI
from tests.operator.operator_objects import node, read_node, run

EXPIRY = "2099-01-01T00:00:00Z"


@pytest.fixture
def client(k8s_api: K8sAPI) -> Client:
    return connect(k8s_api.kubeconfig)


@pytest.fixture
def backend(client: Client) -> KubernetesBackend:
    return KubernetesBackend(client)


def stamped(client: Client, name: str, owner: str, *, prior: bool, heat: str = "") -> None:
    notes = {CORDON_OWNER: owner, PRIOR_UNSCHEDULABLE: "true" if prior else "false"}
    if heat:
        notes[HEAT_EXPECTED] = heat
    node(client, name, unschedulable=True, **notes)


def test_a_stamp_naming_a_deleted_run_is_removed_and_the_node_restored(
    client: Client, backend: KubernetesBackend
) -> None:
    owner = "default/gone/0000-uid"
    stamped(client, "node-a", owner, prior=False, heat=f"{owner}/{EXPIRY}")
    reaping = reap_node(backend, "node-a")
    assert reaping.outcome == REAPED
    assert reaping.requeue_after is None
    found = read_node(client, "node-a")
    assert found["spec"].get("unschedulable", False) is False
    notes = found["metadata"].get("annotations") or {}
    assert not {CORDON_OWNER, PRIOR_UNSCHEDULABLE, HEAT_EXPECTED} & set(notes)


def test_a_node_cordoned_before_its_run_stays_cordoned_when_reaped(
    client: Client, backend: KubernetesBackend
) -> None:
    stamped(client, "node-a", "default/gone/0000-uid", prior=True)
    assert reap_node(backend, "node-a").outcome == REAPED
    found = read_node(client, "node-a")
    assert found["spec"]["unschedulable"] is True
    assert CORDON_OWNER not in (found["metadata"].get("annotations") or {})


def test_a_same_name_run_recreated_under_another_uid_does_not_keep_the_old_stamp(
    client: Client, backend: KubernetesBackend
) -> None:
    live = backend.submit(run("accept", "node-b"))
    stamped(client, "node-a", f"default/accept/not-{live.metadata.uid}", prior=False)
    assert reap_node(backend, "node-a").outcome == REAPED
    assert read_node(client, "node-a")["spec"].get("unschedulable", False) is False


def test_a_live_runs_stamp_is_left_alone_and_polled_again(
    client: Client, backend: KubernetesBackend
) -> None:
    live = backend.submit(run("accept"))
    owner = f"default/accept/{live.metadata.uid}"
    stamped(client, "node-a", owner, prior=False)
    reaping = reap_node(backend, "node-a")
    assert reaping.outcome == ALIVE
    assert reaping.requeue_after == REPOLL_SECONDS
    found = read_node(client, "node-a")
    assert found["spec"]["unschedulable"] is True
    assert found["metadata"]["annotations"][CORDON_OWNER] == owner


@pytest.mark.parametrize("owner", ["default/gone", "default//uid", "a/b/c/d", ""])
def test_an_unparseable_stamp_is_left_alone_and_not_polled(
    client: Client, backend: KubernetesBackend, owner: str
) -> None:
    stamped(client, "node-a", owner, prior=False)
    reaping = reap_node(backend, "node-a")
    assert reaping.outcome == UNREADABLE
    assert reaping.requeue_after is None
    found = read_node(client, "node-a")
    assert found["spec"]["unschedulable"] is True
    assert found["metadata"]["annotations"][CORDON_OWNER] == owner


def test_an_unstamped_node_is_never_touched(client: Client, backend: KubernetesBackend) -> None:
    node(client, "node-a", unschedulable=True)
    before = read_node(client, "node-a")
    reaping = reap_node(backend, "node-a")
    assert reaping.outcome == UNSTAMPED
    assert reaping.requeue_after is None
    assert (
        read_node(client, "node-a")["metadata"]["resourceVersion"]
        == (before["metadata"]["resourceVersion"])
    )


def test_another_runs_heat_declaration_survives_the_reaping(
    client: Client, backend: KubernetesBackend
) -> None:
    other = f"default/other/1111/{EXPIRY}"
    stamped(client, "node-a", "default/gone/0000", prior=False, heat=other)
    assert reap_node(backend, "node-a").outcome == REAPED
    assert read_node(client, "node-a")["metadata"]["annotations"][HEAT_EXPECTED] == other


class FailingReads(KubernetesBackend):
    """A backend whose reads of runs fail as a server error would (not a 404)."""

    def get_run(self, namespace: str, name: str) -> BurnInRun | None:
        raise BackendError(f"get BurnInRun {namespace}/{name}: etcdserver: timeout (HTTP 500)")


def test_a_failed_read_of_the_run_is_never_taken_for_its_absence(client: Client) -> None:
    stamped(client, "node-a", "default/gone/0000", prior=False)
    with pytest.raises(BackendError) as raised:
        reap_node(FailingReads(client), "node-a")
    assert not isinstance(raised.value, NotFound)
    found = read_node(client, "node-a")
    assert found["spec"]["unschedulable"] is True
    assert CORDON_OWNER in found["metadata"]["annotations"]


def test_a_live_stamp_is_polled_again_and_reaped_once_its_run_is_deleted(
    client: Client, backend: KubernetesBackend
) -> None:
    from glimmer.operator.fingerprints import RepollThread

    live = backend.submit(run("accept"))
    stamped(client, "node-a", f"default/accept/{live.metadata.uid}", prior=False)
    repoll = RepollThread(backend, interval=0.0)
    assert reap_node(backend, "node-a").outcome == ALIVE
    repoll.watch("node-a", 0.0)  # due at once
    repoll.poll_due()  # the run is alive: still polled
    assert "node-a" in repoll.due
    assert read_node(client, "node-a")["spec"]["unschedulable"] is True
    backend.delete_run("default", "accept")
    repoll.due["node-a"] = 0.0  # due now
    repoll.poll_due()
    assert "node-a" not in repoll.due  # reaped: nothing left to poll
    assert read_node(client, "node-a")["spec"].get("unschedulable", False) is False
