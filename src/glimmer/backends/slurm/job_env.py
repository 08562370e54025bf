"""What a batch job's runner is told about its node and its peers: the environment a job gets.

* PATH, HOME and LANG from glimmer's own where the spec sets none of them, then the spec's;
* the rendezvous address: the Backend protocol's ``rendezvous_address`` has no node argument,
  while on Slurm a role is reached at the hostname of the node it runs on, so the peer's
  node's ``NodeHostname`` goes into the seat's variable (:func:`role_node` finds the node);
* ``valueFrom`` entries (specs/burnin.md §8.2), by the rules every substrate shares
  (:mod:`glimmer.backends.common.field_refs`): ``fieldRef spec.nodeName`` is the job's node,
  ``fieldRef status.hostIP`` the node's address as Slurm knows it — its ``NodeAddr``, the
  address slurmctld reaches slurmd at, as a kubelet reports a node's address (resolved here
  when it is a name). A node whose address does not resolve makes the execution an Error
  attempt naming the variable; every other source stays unset.

What Slurm says of a node (one ``scontrol show node`` call) is asked once per node and kept:
a node's hostname and address do not change under a run.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Mapping

from glimmer.backends.common.field_refs import HostFacts, resolved
from glimmer.backends.slurm.commands import Slurm, records
from glimmer.engine.backend import ExecutionSpec

PARENT_ENV = ("PATH", "HOME", "LANG")  # what a runner inherits from glimmer's environment


class NodeHosts:
    """Each node's hostname and address as Slurm gives them, asked once per node."""

    def __init__(self, slurm: Slurm) -> None:
        self.slurm = slurm
        self._records: dict[str, Mapping[str, str]] = {}

    def _record(self, node: str) -> Mapping[str, str]:
        if node not in self._records:
            found = records(self.slurm.run("scontrol", "show", "node", "-o", node))
            self._records[node] = found[0] if found else {}
        return self._records[node]

    def hostname(self, node: str) -> str:
        """The host name a node is reached at (``NodeHostname``; the node's name without one)."""
        name = self._record(node).get("NodeHostname", "")
        return name if name and name != "(null)" else node

    def address(self, node: str) -> str | None:
        """The node's IPv4 address: its ``NodeAddr`` (which defaults to its name), resolved
        when it is a name; None when it does not resolve."""
        given = self._record(node).get("NodeAddr", "") or node
        if given == "(null)":
            given = node
        try:
            return str(ipaddress.ip_address(given))
        except ValueError:
            pass
        try:
            found = socket.getaddrinfo(given, None, socket.AF_INET, socket.SOCK_STREAM)
        except OSError:
            return None
        return str(found[0][4][0]) if found else None

    def facts(self, node: str) -> HostFacts:
        why = f"Slurm's address of node {node} (NodeAddr) does not resolve to an IPv4 address"
        return HostFacts(node, lambda: self.address(node), why)


def runner_env(spec: ExecutionSpec, hosts: NodeHosts) -> dict[str, str]:
    """The runner's environment (module docstring). Raises
    :class:`~glimmer.backends.common.field_refs.FieldRefError` for a ``valueFrom`` known here
    and not answerable."""
    answered = resolved(spec, lambda: hosts.facts(spec.node))
    env = {name: os.environ[name] for name in PARENT_ENV if name in os.environ}
    env.update(dict(answered.env))
    seat = spec.seat
    if seat is not None and seat.address_env:
        node = role_node(spec, seat.peer_role)
        if node is not None:
            env[seat.address_env] = hosts.hostname(node)
    return env


def role_node(spec: ExecutionSpec, role: str) -> str | None:
    """The node ``role`` of the spec's unit runs on: a Pair's server the unit's first node, its
    client the second, Group rank i the i-th (engine/pair_unit.py, group_unit.py)."""
    nodes = spec.unit_nodes
    index: int | None = None
    if role == "server":
        index = 0
    elif role == "client":
        index = 1
    elif role.startswith("rank-") and role[5:].isdigit():
        index = int(role[5:])
    return nodes[index] if index is not None and index < len(nodes) else None
