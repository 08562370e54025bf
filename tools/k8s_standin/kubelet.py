"""The kubelet stand-in: one instance serves a set of stand-in nodes, over HTTP only.

It registers its nodes (Node objects with the well-known labels, addresses, capacity), then
follows Pods, Services and Nodes cluster-wide (LIST, then WATCH from the list's
resourceVersion; a list again when the watch is too old). A pod bound to one of its nodes
becomes a :class:`~tools.k8s_standin.kubelet_pod.PodWorker`; a pod bound to any other name is
not its business and stays Pending, as on a cluster whose node has no kubelet. A pod without
``spec.nodeName`` is bound by the minimal scheduler (kubelet_scheduler.py) when this instance
schedules, with a ``pods/binding`` (or, on an API without that subresource, a patch of
``spec.nodeName``; on one that allows neither, the choice stays in this kubelet, which runs
the pod there while the API shows no ``nodeName``); one no node fits gets
``PodScheduled=False/Unschedulable`` with the scheduler's reasons. ``nodeName`` set by the
pod's author bypasses the scheduler, so such a pod runs on a cordoned or tainted node, as on a
real kubelet.

Every node's hosts file is kept current from the Services and Pods (hosts.py): rewritten
right before any process starts, and soon after every change.

Two hooks let a simulated fleet stand behind the nodes (the Trainer stand-in, trainer*.py):
``node_shape`` makes each Node as registered (the fleet's labels, its GPUs allocatable, which the
scheduler then weighs), and ``player`` names the pods that run a simulation's process instead
of their command (processes.py ``Play``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import aiohttp

from tools.k8s_standin import hosts, kubelet_scheduler
from tools.k8s_standin import kubelet_status as st
from tools.k8s_standin.follow import Controller, Key, follow, key_of
from tools.k8s_standin.kubelet_client import ApiError, Client
from tools.k8s_standin.kubelet_pod import PodWorker
from tools.k8s_standin.node_netns import NodeNetworks
from tools.k8s_standin.processes import Player

log = logging.getLogger("k8s_standin.kubelet")
_TERMINAL = ("Succeeded", "Failed")


class ClaimCheck(Protocol):
    """Where a pod's resource claims cannot be allocated (the DRA stand-in, dra.py)."""

    def refusals(
        self,
        pod: Mapping[str, Any],
        nodes: Iterable[Mapping[str, Any]],
        placed: Sequence[tuple[Mapping[str, Any], str]],
    ) -> tuple[str, dict[str, str]]:
        """(why the pod cannot be scheduled anywhere yet, or ""; node -> why not there)."""
        ...


class Kubelet(Controller):
    def __init__(
        self,
        url: str,
        network: NodeNetworks,
        nodes: Sequence[str],
        *,
        log_dir: Path,
        work_dir: Path,
        schedule: bool = True,
        register: bool = True,
        node_labels: Mapping[str, str] | None = None,
        node_shape: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        player: Player | None = None,
        claims: ClaimCheck | None = None,
    ) -> None:
        self.url = url
        self.network = network
        self.nodes = list(nodes)
        self.log_dir = log_dir
        self.work_dir = work_dir
        self.schedule = schedule
        self.register = register
        self.node_labels = dict(node_labels or {})
        # A simulated fleet's say: each Node as registered (labels, GPUs) and the pods it plays.
        self.node_shape = node_shape
        self.player = player
        # The DRA driver's say on a pod with spec.resourceClaims: where its claims allocate.
        self.claims = claims
        self.pods: dict[Key, dict[str, Any]] = {}
        self.services: dict[Key, dict[str, Any]] = {}
        self.api_nodes: dict[Key, dict[str, Any]] = {}
        self.workers: dict[str, PodWorker] = {}  # by pod UID: a same-name pod is a new pod
        self._pod_tasks: set[asyncio.Task[None]] = set()  # every worker still running
        self._bound: set[str] = set()
        self._binding = True  # until the API says it has no pods/binding
        # Pods placed without spec.nodeName, by UID: on an API with neither a binding
        # subresource nor a mutable nodeName, the choice lives here (and only here).
        self._assigned: dict[str, str] = {}
        self._patchable = True  # until the API refuses a patch of spec.nodeName
        # Where this scheduler bound each pod, by UID, until the pod is gone: the watch may lag
        # a binding, and a node's extended resources are counted from these too.
        self._placed: dict[str, str] = {}
        self._wake = asyncio.Event()
        self._hosts_stale = asyncio.Event()

    async def run(self, ready: asyncio.Event | None = None) -> None:
        """Serve until cancelled; ``ready`` is set once the nodes are registered and the
        first lists are in. Cancelling stops every pod's process."""
        async with Client(self.url) as client:
            self._client = client
            tasks: list[asyncio.Task[None]] = []
            try:
                if self.register:
                    await self.register_nodes()
                listed = [asyncio.Event() for _ in range(3)]
                collections = [
                    ("/api/v1/nodes", self.api_nodes, self._on_node),
                    ("/api/v1/services", self.services, self._on_service),
                    ("/api/v1/pods", self.pods, self._on_pod),
                ]
                for (path, store, handler), done in zip(collections, listed, strict=True):
                    tasks.append(asyncio.create_task(follow(client, path, store, handler, done)))
                for done in listed:
                    await done.wait()
                tasks.append(asyncio.create_task(self._hosts_loop()))
                if self.schedule:
                    tasks.append(asyncio.create_task(self._schedule_loop()))
                if ready is not None:
                    ready.set()
                await asyncio.Event().wait()
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await self.stop_pods()

    async def stop_pods(self) -> None:
        """Stop every pod's process, those of pods already gone from the API included."""
        live = [t for t in self._pod_tasks if not t.done()]
        for task in live:
            task.cancel()
        await asyncio.gather(*live, return_exceptions=True)

    async def register_nodes(self) -> None:
        """Create each node's Node (kept if it exists) and post its status."""
        for name in self.nodes:
            node = st.node_object(name, self.network.address(name), self.node_labels)
            if self.node_shape is not None:
                node = self.node_shape(node)
            try:
                await self.client.write("POST", "/api/v1/nodes", node)
            except ApiError as e:
                if e.reason != "AlreadyExists":
                    raise
            await self.client.merge_patch(
                f"/api/v1/nodes/{name}/status", {"status": node["status"]}
            )

    # -- events ------------------------------------------------------------------------------

    async def _on_node(self, kind: str, node: dict[str, Any]) -> None:
        self._wake.set()  # a node came, went or changed: pods may fit now
        self._hosts_stale.set()

    async def _on_service(self, kind: str, service: dict[str, Any]) -> None:
        self._hosts_stale.set()

    async def _on_pod(self, kind: str, pod: dict[str, Any]) -> None:
        meta, spec = pod["metadata"], pod.get("spec") or {}
        uid = str(meta.get("uid", ""))
        if spec.get("subdomain"):
            self._hosts_stale.set()
        worker = self.workers.get(uid)
        if kind == "DELETED":
            self._bound.discard(uid)
            self._assigned.pop(uid, None)
            self._placed.pop(uid, None)
            if worker is not None:
                worker.request_stop("gone", worker.grace_of(pod))
                self.workers.pop(uid, None)
            return
        node = spec.get("nodeName") or self._assigned.get(uid)
        if not node:
            self._wake.set()
            return
        if worker is None and node in self.nodes:
            if (pod.get("status") or {}).get("phase") in _TERMINAL or meta.get("deletionTimestamp"):
                return  # finished before this kubelet saw it, or already going
            worker = PodWorker(
                pod,
                node,
                client=self.client,
                network=self.network,
                log_dir=self.log_dir,
                work_dir=self.work_dir,
                before_start=self._before_start,
                player=self.player,
            )
            self.workers[uid] = worker
            task = worker.start()
            self._pod_tasks.add(task)
            task.add_done_callback(self._pod_tasks.discard)
        elif worker is not None and meta.get("deletionTimestamp"):
            worker.request_stop("deleting", worker.grace_of(pod))

    async def _before_start(self) -> None:
        self.refresh_hosts()

    # -- hosts -------------------------------------------------------------------------------

    async def _hosts_loop(self) -> None:
        """Rewrite the hosts files once per burst of changes (a relist of a thousand nodes
        is one rewrite, not a thousand)."""
        while True:
            await self._hosts_stale.wait()
            self._hosts_stale.clear()
            self.refresh_hosts()

    def node_addresses(self) -> dict[str, str]:
        out = {n: self.network.address(n) for n in self.nodes}
        for node in self.api_nodes.values():
            address = st.internal_ip(node)
            if address:
                out.setdefault(str(node["metadata"]["name"]), address)
        return out

    def refresh_hosts(self) -> None:
        """Every node's hosts file from the Services and Pods as last seen."""
        if not any(self.network.hosts_path(n) for n in self.nodes):
            return
        addresses = self.node_addresses()
        records = hosts.rendezvous_records(self.services.values(), self.pods.values(), addresses)
        for node in self.nodes:
            path = self.network.hosts_path(node)
            if path is not None:
                hosts.write_in_place(path, hosts.render(node, addresses, records))

    # -- scheduling --------------------------------------------------------------------------

    async def _schedule_loop(self) -> None:
        while True:
            # asyncio.wait, not wait_for: on 3.11 a wait_for whose event fires as the task is
            # cancelled returns, and the cancellation is lost (the cluster's stop then hung).
            woken = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait({woken}, timeout=1.0)
            finally:
                woken.cancel()
            self._wake.clear()
            used = self._usage()
            for pod in list(self.pods.values()):
                try:
                    await self._schedule(pod, used)
                except (ApiError, aiohttp.ClientError, TimeoutError) as e:
                    log.debug("scheduling %s: %s", key_of(pod), e)

    def placed_pods(self) -> list[tuple[dict[str, Any], str]]:
        """(pod, node) of every placed pod not finished: what holds its node's resources."""
        out = []
        for pod in self.pods.values():
            uid = str(pod["metadata"].get("uid", ""))
            spec = pod.get("spec") or {}
            node = spec.get("nodeName") or self._placed.get(uid) or self._assigned.get(uid)
            if node and (pod.get("status") or {}).get("phase") not in _TERMINAL:
                out.append((pod, str(node)))
        return out

    def _usage(self) -> dict[str, dict[str, float]]:
        """The extended resources each node's placed, unfinished pods hold."""
        used: dict[str, dict[str, float]] = {}
        for pod, node in self.placed_pods():
            for name, amount in kubelet_scheduler.extended_requests(pod.get("spec") or {}).items():
                held = used.setdefault(node, {})
                held[name] = held.get(name, 0.0) + amount
        return used

    async def _schedule(self, pod: dict[str, Any], used: dict[str, dict[str, float]]) -> None:
        meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
        uid = str(meta.get("uid", ""))
        if spec.get("nodeName") or uid in self._bound or meta.get("deletionTimestamp"):
            return
        if spec.get("schedulerName", "default-scheduler") != "default-scheduler":
            return
        if status.get("phase") in _TERMINAL:
            return
        ns, name = key_of(pod)
        waiting, refused = "", dict[str, str]()  # the DRA driver's say on the pod's claims
        if self.claims is not None and spec.get("resourceClaims"):
            waiting, refused = self.claims.refusals(
                pod, self.api_nodes.values(), self.placed_pods()
            )
        node, message = (
            (None, waiting)
            if waiting
            else kubelet_scheduler.choose(pod, self.api_nodes.values(), used, refused)
        )
        if node is None:
            current = [c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"]
            if current and current[0].get("message") == message:
                return
            with contextlib.suppress(ApiError):
                await self.client.merge_patch(
                    f"/api/v1/namespaces/{ns}/pods/{name}/status",
                    {"status": st.unschedulable(message, st.now())},
                )
            return
        self._bound.add(uid)  # the watch may lag the binding: never bind twice
        self._placed[uid] = node
        for resource, amount in kubelet_scheduler.extended_requests(spec).items():
            held = used.setdefault(node, {})
            held[resource] = held.get(resource, 0.0) + amount
        try:
            bound = await self._bind(ns, name, node)
        except BaseException:
            self._bound.discard(uid)
            self._placed.pop(uid, None)
            raise
        if not bound:
            self._assigned[uid] = node
            await self._on_pod("MODIFIED", pod)

    async def _bind(self, ns: str, name: str, node: str) -> bool:
        """Bind the pod to ``node`` in the API; False when the API allows no way to."""
        path = f"/api/v1/namespaces/{ns}/pods/{name}"
        if self._binding:
            binding = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": name, "namespace": ns},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node},
            }
            for attempt in range(20):
                try:
                    await self.client.post_once(f"{path}/binding", binding)
                    return True
                except ApiError as e:
                    if e.status not in (404, 405, 409):
                        raise
                    try:
                        pod = await self.client.get(path)
                    except ApiError as gone:
                        if gone.status == 404:
                            return True  # the pod went meanwhile: nothing to bind
                        raise
                    if pod["spec"].get("nodeName") or pod["metadata"].get("deletionTimestamp"):
                        return True  # bound by another, or being deleted: nothing to do
                    if e.status != 409:
                        self._binding = False  # no binding subresource here: patch instead
                        break
                    # A Conflict on a pod still unbound: a refused write, tried again.
                    await asyncio.sleep(min(0.02 * (attempt + 1), 0.3))
            else:
                raise ApiError(409, f"binding {ns}/{name} was refused 20 times")
        if not self._patchable:
            return False
        try:
            await self.client.merge_patch(path, {"spec": {"nodeName": node}})
        except ApiError as e:
            if e.status == 422:
                self._patchable = False  # spec.nodeName is immutable, as on a real API server
                return False
            if e.status != 404:
                raise
        return True
