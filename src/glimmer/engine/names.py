"""Deterministic names (§2.7, §2.8): the same run, test, node, attempt and role always give the
same execution name, so a restarted engine finds what it created instead of creating it twice.

The run's UID is hashed in, so a deleted-and-recreated run of the same name never adopts the old
run's executions; the attempt is part of the name, so a repeat never re-harvests its predecessor.
"""

from __future__ import annotations

import hashlib


def _hex8(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8]


def execution_name(
    run: str, uid: str, test_index: int, node: str, attempt: int, role: str = ""
) -> str:
    """``<run[:36]>-t<i>-a<n>[-<role>]-<8 hex>``; the role (server, client, rank-<i>) is folded
    into the hash as well as the name. (A pass asks again for every unit in flight; the engine
    remembers the answers per run, see :meth:`.memory.RunMemory.execution_name`.)"""
    parts = [uid, run, str(test_index), node, str(attempt)]
    if role:
        parts.append(role)
    base = f"{run[:36]}-t{test_index}-a{attempt}"
    middle = f"-{role}" if role else ""
    return f"{base}{middle}-{_hex8(*parts)}"


def service_name(run: str, uid: str, test_index: int, attempt: int, scope: str) -> str:
    """The rendezvous service of one Pair/Group attempt: ``bp-<run[:26]>-t<i>-a<n>-<8 hex>``.
    One per attempt, so a retry never resolves a dead peer."""
    digest = _hex8(uid, run, str(test_index), str(attempt), scope.lower())
    return f"bp-{run[:26]}-t{test_index}-a{attempt}-{digest}"


def rank_role(rank: int) -> str:
    return f"rank-{rank}"


def result_key(nodes: list[str] | tuple[str, ...] | None) -> str:
    """The node part of a result's identity: its first node ("" for synthetic results)."""
    return nodes[0] if nodes else ""


def delivery_key(test: str, nodes: list[str] | tuple[str, ...] | None) -> str:
    """TestCompleted idempotency key: ``<test>/<node1>[+<node2>…]``."""
    return f"{test}/{'+'.join(nodes or ())}"
