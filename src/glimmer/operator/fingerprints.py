"""The NodeFingerprint reconciler (specs/burnin.md §7.2), which also hosts the orphan reaper.

Per Node event: the reaper first (:mod:`.reaper`), then the node's identity
(:func:`glimmer.fingerprint.node_object.from_node`) folded into its NodeFingerprint
(:func:`glimmer.fingerprint.reconcile.observe`: sticky drift, ``capturedAt`` moving only on a
change) and written through the API — the object created when missing, its status through the
status subresource with the resourceVersion it was read at, and only when something changed.
A transition to drift posts a core/v1 ``HardwareDrift`` Warning Event about the Node, so
``kubectl describe node`` shows it. Drift never starts a run.

kopf wiring (:func:`register`): Node events are ``on.event`` handlers, which keep no state on
the Node (a changing handler would write kopf's annotations onto every Node, and a timer would
put a finalizer on it). Only a change to what the fingerprint or the reaper reads (labels,
``status.nodeInfo``, allocatable, the cordon-owner annotation) is looked at again — kubelet
heartbeats are not; a deleted NodeFingerprint is recaptured at once. The reaper's 5-minute
re-poll of a node with a live stamp is :class:`RepollThread`, started and stopped with the
operator.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lightkube import Client
from lightkube.generic_resource import create_namespaced_resource

from glimmer.api.fingerprint import NodeFingerprint
from glimmer.api.meta import API_GROUP
from glimmer.backends.kubernetes.errors import AlreadyExists, api_call
from glimmer.backends.kubernetes.events import WARNING, Involved, event_manifest
from glimmer.backends.kubernetes.resources import EVENTS, NODES, VERSION, as_dict
from glimmer.backends.kubernetes.run_store import parsed
from glimmer.backends.kubernetes.wire import for_cluster
from glimmer.engine.backend import Backend, BackendError, NotFound
from glimmer.engine.keys import CORDON_OWNER
from glimmer.fingerprint.naming import fingerprint_name
from glimmer.fingerprint.node_object import from_node, node_name
from glimmer.fingerprint.reconcile import Observation, observe
from glimmer.operator.reaper import REPOLL_SECONDS, reap_node

if TYPE_CHECKING:
    import kopf

    from glimmer.operator.context import OperatorContext

log = logging.getLogger(__name__)

FINGERPRINTS = create_namespaced_resource(
    API_GROUP, VERSION, NodeFingerprint.KIND, NodeFingerprint.PLURAL
)
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
# Events about cluster-scoped objects (Nodes) live here, as the kubelet's do.
EVENT_NAMESPACE = "default"


class NoNamespace(RuntimeError):
    """The operator does not know where NodeFingerprints live (§1.6: startup fails)."""


def fingerprint_namespace(configured: str | None = None) -> str:
    """Where NodeFingerprints live: ``configured``, else ``$POD_NAMESPACE``, else the service
    account's namespace file; none known → :class:`NoNamespace`."""
    if configured:
        return configured
    if env := os.environ.get("POD_NAMESPACE"):
        return env
    try:
        text = SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    except OSError:
        text = ""
    if not text:
        raise NoNamespace(
            "NodeFingerprints need a namespace: set POD_NAMESPACE (the manifests do) or run "
            "in a pod with a service account"
        )
    return text


def _read(client: Client, namespace: str, name: str) -> NodeFingerprint | None:
    try:
        with api_call(f"get NodeFingerprint {namespace}/{name}"):
            found = as_dict(client.get(FINGERPRINTS, name, namespace=namespace))
    except NotFound:
        return None
    return parsed(NodeFingerprint, found, f"NodeFingerprint {namespace}/{name}")


def _create(client: Client, fingerprint: NodeFingerprint, namespace: str) -> NodeFingerprint:
    body = for_cluster(fingerprint.model_copy(update={"status": None}))
    body["metadata"]["namespace"] = namespace
    with api_call(f"create NodeFingerprint {namespace}/{fingerprint.name}"):
        made = client.create(FINGERPRINTS.from_dict(body), namespace=namespace)
    return parsed(NodeFingerprint, as_dict(made), f"NodeFingerprint {namespace}")


def _write_status(client: Client, stored: NodeFingerprint, wanted: NodeFingerprint) -> None:
    namespace = stored.metadata.namespace or "default"
    body = for_cluster(stored)  # its resourceVersion is the precondition
    body["status"] = for_cluster(wanted.status) if wanted.status is not None else {}
    with api_call(f"write the status of NodeFingerprint {namespace}/{stored.name}"):
        client.replace(FINGERPRINTS.Status.from_dict(body), stored.name, namespace=namespace)


def _post_drift(
    client: Client, node: Mapping[str, Any], reason: str, message: str, at: datetime
) -> None:
    meta = node.get("metadata") or {}
    involved = Involved("v1", "Node", EVENT_NAMESPACE, str(meta.get("name", "")), "")
    manifest = event_manifest(involved, reason, message, WARNING, at)
    # A Node has no namespace: kubectl describe node looks for events naming none.
    manifest["involvedObject"] = {
        "apiVersion": "v1",
        "kind": "Node",
        "name": involved.name,
        "uid": str(meta.get("uid", "")),
    }
    try:
        with api_call(f"post event {reason} on Node {involved.name}"):
            client.create(EVENTS.from_dict(manifest), namespace=EVENT_NAMESPACE)
    except AlreadyExists:
        pass  # the same notice, already posted


def fingerprint_node(
    client: Client, node: Mapping[str, Any], namespace: str, now: datetime
) -> Observation:
    """Fold ``node`` (a Node object as JSON) into its NodeFingerprint in ``namespace`` at
    ``now`` (aware): created when missing, status written when changed, drift posted."""
    name = node_name(node)
    existing = _read(client, namespace, fingerprint_name(name))
    seen = observe(existing, name, from_node(node), now, namespace=namespace)
    if seen.conflict is not None:
        log.warning("%s; leaving it alone", seen.conflict)
        return seen
    if seen.changed:
        stored = existing or _create(client, seen.fingerprint, namespace)
        _write_status(client, stored, seen.fingerprint)
    for event in seen.events:
        try:
            _post_drift(client, node, event.reason, event.message, now)
        except BackendError as e:  # a notice, not a decision: the status already says it
            log.warning("could not post %s for node %s: %s", event.reason, name, e)
    return seen


def salient(node: Mapping[str, Any]) -> str:
    """What of a Node the fingerprint and the reaper read; an event that leaves it unchanged
    (a heartbeat) has nothing new for either."""
    meta = node.get("metadata") or {}
    status = node.get("status") or {}
    seen = {
        "labels": meta.get("labels") or {},
        "owner": (meta.get("annotations") or {}).get(CORDON_OWNER),
        "info": status.get("nodeInfo") or {},
        "allocatable": status.get("allocatable") or {},
        "uid": meta.get("uid"),
    }
    return json.dumps(seen, sort_keys=True)


@dataclass
class RepollThread:
    """Re-runs the reaper on nodes that carried a live stamp, every 5 minutes each, from a
    thread of its own (a kopf timer would put a finalizer on every Node)."""

    backend: Backend
    interval: float = REPOLL_SECONDS
    tick: float = 5.0
    due: dict[str, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def watch(self, node: str, requeue_after: float | None) -> None:
        """Poll ``node`` again after ``requeue_after`` seconds (None: stop polling it)."""
        with self._lock:
            if requeue_after is None:
                self.due.pop(node, None)
            else:
                self.due[node] = time.monotonic() + requeue_after

    def poll_due(self) -> None:
        """Reap every node whose poll is due."""
        now = time.monotonic()
        with self._lock:
            ready = [n for n, at in self.due.items() if at <= now]
        for node in ready:
            try:
                reaping = reap_node(self.backend, node)
            except BackendError as e:
                log.warning("reaper: node %s: %s; trying again later", node, e)
                self.watch(node, self.interval)
                continue
            self.watch(node, reaping.requeue_after)

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="glimmer-reaper", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def _loop(self) -> None:
        while not self._stop.wait(self.tick):
            self.poll_due()


@dataclass
class NodeHandler:
    """What one Node event does: reap, then fingerprint; unchanged events are skipped."""

    context: OperatorContext
    namespace: str
    repoll: RepollThread
    _seen: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on_node(self, event_type: str, body: Mapping[str, Any]) -> None:
        name = node_name(body)
        if not name:
            return
        if event_type == "DELETED":
            # A deleted node keeps its fingerprint (§7.2); it has nothing left to reap.
            with self._lock:
                self._seen.pop(name, None)
            self.repoll.watch(name, None)
            return
        mark = salient(body)
        with self._lock:
            if self._seen.get(name) == mark:
                return
        self.observe(name, body)
        with self._lock:
            self._seen[name] = mark

    def observe(self, name: str, body: Mapping[str, Any]) -> None:
        reaping = reap_node(self.context.backend, name)
        self.repoll.watch(name, reaping.requeue_after)
        fingerprint_node(
            self.context.backend.client, body, self.namespace, self.context.clock.now()
        )

    def on_fingerprint_deleted(self, node: str) -> None:
        """A human deleted a fingerprint (a re-baseline): capture the node again now."""
        with self._lock:
            self._seen.pop(node, None)
        try:
            with api_call(f"get node {node}"):
                body = as_dict(self.context.backend.client.get(NODES, node))
        except NotFound:
            return
        self.observe(node, body)


def register(registry: kopf.OperatorRegistry, context: OperatorContext) -> None:
    """The Node watch (reaper + fingerprint), the NodeFingerprint deletion watch, and the
    reaper's re-poll thread, on ``registry``."""
    import kopf

    namespace = fingerprint_namespace(context.namespace)
    handler = NodeHandler(context, namespace, RepollThread(context.backend))

    @kopf.on.event("", "v1", "nodes", registry=registry, id="node_fingerprint")
    def node_event(type: str | None, body: kopf.Body, **_: Any) -> None:
        handler.on_node(type or "", body)

    @kopf.on.event(
        API_GROUP, VERSION, NodeFingerprint.PLURAL, registry=registry, id="fingerprint_deleted"
    )
    def fingerprint_event(type: str | None, body: kopf.Body, **_: Any) -> None:
        if type == "DELETED":
            handler.on_fingerprint_deleted(str((body.get("spec") or {}).get("nodeName", "")))

    @kopf.on.startup(registry=registry, id="reaper_repoll_start")
    def start(**_: Any) -> None:
        handler.repoll.start()

    @kopf.on.cleanup(registry=registry, id="reaper_repoll_stop")
    def stop(**_: Any) -> None:
        handler.repoll.stop()
