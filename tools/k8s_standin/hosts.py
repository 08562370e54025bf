"""The hosts file each stand-in node's pods resolve names through: the cluster DNS of a real
cluster, reduced to what a rendezvous needs.

A headless Service (``clusterIP: None``) that publishes not-ready addresses gives every pod it
selects that names it as ``spec.subdomain`` and has a ``spec.hostname`` the records
``<hostname>.<subdomain>.<namespace>.svc`` and the same under ``.cluster.local`` — as the
cluster DNS does for the rendezvous of a Pair or Group (podspec.rendezvous_address). Every node's
name resolves to its address too, as on a cluster whose nodes are in DNS.

``ip netns exec`` bind-mounts ``/etc/netns/<namespace>/hosts`` over ``/etc/hosts`` when a
process starts, so the file is rewritten IN PLACE (same inode): a process already running sees
a record added after it started, which a rename would hide from it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

CLUSTER_DOMAIN = "cluster.local"
_TERMINAL = ("Succeeded", "Failed")


def _selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _publishes(service: Mapping[str, Any]) -> bool:
    spec = service.get("spec") or {}
    return spec.get("clusterIP") == "None" and bool(spec.get("publishNotReadyAddresses"))


def rendezvous_records(
    services: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    node_addresses: Mapping[str, str],
) -> list[tuple[str, tuple[str, ...]]]:
    """(address, names) of every pod a publishing headless Service names, sorted by name.

    A pod's address is its ``status.podIP``, else its node's (a stand-in pod has its node's
    address); a pod with neither, or one that has terminated, has no record (as the endpoints
    controller drops it)."""
    by_ns: dict[str, list[Mapping[str, Any]]] = {}
    for pod in pods:
        by_ns.setdefault(pod["metadata"].get("namespace", "default"), []).append(pod)
    records: list[tuple[str, tuple[str, ...]]] = []
    for service in services:
        if not _publishes(service):
            continue
        meta = service["metadata"]
        ns, name = meta.get("namespace", "default"), meta["name"]
        selector = (service.get("spec") or {}).get("selector") or {}
        for pod in by_ns.get(ns, ()):
            spec, status = pod.get("spec") or {}, pod.get("status") or {}
            hostname = spec.get("hostname")
            if not hostname or spec.get("subdomain") != name:
                continue
            if status.get("phase") in _TERMINAL:
                continue
            if not _selects(selector, pod["metadata"].get("labels") or {}):
                continue
            address = status.get("podIP") or node_addresses.get(spec.get("nodeName") or "")
            if not address:
                continue
            short = f"{hostname}.{name}.{ns}.svc"
            records.append((address, (short, f"{short}.{CLUSTER_DOMAIN}")))
    return sorted(records, key=lambda r: r[1])


def render(
    node: str,
    node_addresses: Mapping[str, str],
    records: Iterable[tuple[str, tuple[str, ...]]],
) -> str:
    """The hosts file of ``node``: localhost, every node by name, then the rendezvous records."""
    lines = ["127.0.0.1\tlocalhost", "::1\tlocalhost ip6-localhost ip6-loopback"]
    own = node_addresses.get(node)
    if own:
        lines.append(f"{own}\t{node}")
    lines += [f"{a}\t{n}" for n, a in sorted(node_addresses.items()) if n != node]
    lines += [f"{address}\t{' '.join(names)}" for address, names in records]
    return "\n".join(lines) + "\n"


def write_in_place(path: Path, text: str) -> bool:
    """Make ``path`` hold ``text``, keeping its inode; False when it already did."""
    data = text.encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        current = b""
        while chunk := os.read(fd, 1 << 16):
            current += chunk
        if current == data:
            return False
        # One write from the start, then cut what is left of the old text: a reader sees the
        # old records or the new ones, never a file emptied in between.
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
        return True
    finally:
        os.close(fd)
