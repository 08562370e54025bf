"""The hosts file a stand-in node's pods resolve the rendezvous through (k8s_standin.hosts)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tools.k8s_standin import hosts


def _service(name: str = "rdv", *, headless: bool = True, publish: bool = True) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "burn"},
        "spec": {
            "clusterIP": "None" if headless else "10.0.0.9",
            "publishNotReadyAddresses": publish,
            "selector": {"burnin.glimmer.ai/run": "r1"},
        },
    }


def _pod(role: str, node: str, *, phase: str = "Pending", ip: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if ip:
        status["podIP"] = ip
    return {
        "metadata": {
            "name": f"p-{role}",
            "namespace": "burn",
            "labels": {"burnin.glimmer.ai/run": "r1"},
        },
        "spec": {"nodeName": node, "hostname": role, "subdomain": "rdv"},
        "status": status,
    }


NODES = {"node-1": "10.201.3.2", "node-2": "10.201.3.3"}


def test_a_publishing_headless_service_names_each_selected_pod_at_its_nodes_address() -> None:
    records = hosts.rendezvous_records(
        [_service()], [_pod("server", "node-1"), _pod("client", "node-2")], NODES
    )
    assert records == [
        ("10.201.3.3", ("client.rdv.burn.svc", "client.rdv.burn.svc.cluster.local")),
        ("10.201.3.2", ("server.rdv.burn.svc", "server.rdv.burn.svc.cluster.local")),
    ]


def test_a_pods_own_ip_wins_over_its_nodes_address() -> None:
    records = hosts.rendezvous_records(
        [_service()], [_pod("server", "node-1", ip="10.9.9.9")], NODES
    )
    assert records[0][0] == "10.9.9.9"


def test_no_record_for_a_service_that_is_not_headless_or_hides_unready_pods() -> None:
    pods = [_pod("server", "node-1")]
    assert hosts.rendezvous_records([_service(headless=False)], pods, NODES) == []
    assert hosts.rendezvous_records([_service(publish=False)], pods, NODES) == []


def test_no_record_for_a_terminated_pod_an_unselected_pod_or_another_namespace() -> None:
    done = _pod("server", "node-1", phase="Succeeded")
    other = _pod("client", "node-2")
    other["metadata"]["labels"] = {"burnin.glimmer.ai/run": "r2"}
    elsewhere = _pod("rank-0", "node-1")
    elsewhere["metadata"]["namespace"] = "other"
    assert hosts.rendezvous_records([_service()], [done, other, elsewhere], NODES) == []


def test_no_record_for_a_pod_on_a_node_with_no_known_address() -> None:
    assert hosts.rendezvous_records([_service()], [_pod("server", "node-9")], NODES) == []


def test_the_hosts_file_names_localhost_every_node_then_the_records() -> None:
    records = [("10.201.3.3", ("client.rdv.burn.svc", "client.rdv.burn.svc.cluster.local"))]
    text = hosts.render("node-2", NODES, records)
    lines = text.splitlines()
    assert lines[0] == "127.0.0.1\tlocalhost"
    assert "10.201.3.3\tnode-2" in lines
    assert "10.201.3.2\tnode-1" in lines
    assert lines[-1] == "10.201.3.3\tclient.rdv.burn.svc client.rdv.burn.svc.cluster.local"


def test_the_hosts_file_is_rewritten_in_place_so_a_running_process_sees_new_records(
    tmp_path: Path,
) -> None:
    path = tmp_path / "netns" / "hosts"
    assert hosts.write_in_place(path, "a long first version of the file\n")
    inode = os.stat(path).st_ino
    assert hosts.write_in_place(path, "short\n")
    assert path.read_text() == "short\n"
    assert os.stat(path).st_ino == inode
    assert not hosts.write_in_place(path, "short\n")
