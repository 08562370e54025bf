"""Delivery from the operator (specs/burnin.md §5.1, §5.5–5.7): the BurnInSink objects of the
cluster as a :class:`~glimmer.sinks.sinkset.SinkSet`, and their ``lastDelivery``/``lastError``
written back through the status subresource.

:class:`ClusterSinks` is the SinkSet the kubernetes backend delivers through. Before each
transition it reads the sinks the run's pinned plan names, fresh (a GET each: a sink created,
edited or deleted since is honoured at once; a missing one counts as a failed delivery, as
§5.1 says), and builds each into a sink once per spec:

* ``Webhook`` → :class:`~glimmer.sinks.webhook.WebhookSink`, its bearer token read from the
  Secret ``tokenSecretRef`` names, in the sink's namespace, at each send (never kept; a Secret
  or key missing, or an empty value, is a permanent failure of that sink);
* ``ConfigMap`` → :class:`~glimmer.operator.configmap_sink.ConfigMapSink`;
* ``Prometheus`` → the process's exporter (:class:`~glimmer.sinks.prometheus.PrometheusSink`),
  served on ``/metrics`` by :mod:`glimmer.operator.exporter`.

Everything else is the SinkSet's: the envelope built and validated once, the operator's retry
policy (2 attempts, 1 s/2 s, one 15 s budget), the outbox, and the rule that a sink failure
never reaches the run. After the transition each named sink's state is written to its status
when it changed — best-effort: a failed status write is logged and never fails the delivery.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from lightkube import Client
from lightkube.resources.core_v1 import Namespace, Secret
from lightkube.types import PatchType

from glimmer.api.k8s import SecretKeySelector
from glimmer.api.sink import BurnInSink, BurnInSinkStatus, SinkType
from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.resources import SINKS, as_dict
from glimmer.backends.kubernetes.run_store import parsed
from glimmer.engine.backend import BackendError, NotFound
from glimmer.operator.configmap_sink import ConfigMapSink
from glimmer.sinks.base import Sink
from glimmer.sinks.envelope import Cluster, Transition, rfc3339
from glimmer.sinks.errors import DeliveryError
from glimmer.sinks.prometheus import Exporter, PrometheusSink
from glimmer.sinks.sender import OPERATOR_POLICY, RetryPolicy, Sender
from glimmer.sinks.sinkset import SinkSet
from glimmer.sinks.webhook import WebhookSink

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (namespace, BurnInSink name)
CLUSTER_NAMESPACE = "kube-system"  # its UID names the cluster in every envelope (§5.3)


def cluster_of(client: Client, name: str = "") -> Cluster:
    """Who the runs run on, for the envelope: ``name`` only as the operator was told it (never
    guessed), ``uid`` the kube-system namespace's UID, read once at startup (empty when it
    cannot be read: the field is then left out, never invented)."""
    try:
        with api_call(f"get namespace {CLUSTER_NAMESPACE}"):
            found = as_dict(client.get(Namespace, CLUSTER_NAMESPACE))
    except BackendError as e:
        log.warning("the cluster's uid is unknown (%s); envelopes carry none", e)
        return Cluster(name=name)
    return Cluster(name=name, uid=str((found.get("metadata") or {}).get("uid") or ""))


def secret_token(
    client: Client, namespace: str, ref: SecretKeySelector, field: str = "tokenSecretRef"
) -> Callable[[], str]:
    """The bearer token of ``ref`` in ``namespace``, read from the API at each send; ``field``
    is the spec field that holds ``ref``, as errors name it (a BurnInSink's ``tokenSecretRef``,
    a ReportExport's ``bearerTokenSecretRef``)."""

    def token() -> str:
        if not ref.name:
            raise DeliveryError(f"{field} names no Secret", permanent=True)
        try:
            with api_call(f"get Secret {namespace}/{ref.name}"):
                found = as_dict(client.get(Secret, ref.name, namespace=namespace))
        except NotFound:
            raise DeliveryError(f"Secret {ref.name!r} not found", permanent=True) from None
        except BackendError as e:  # the API away: the next attempt may read it
            raise DeliveryError(f"Secret {ref.name!r}: {e}") from e
        data = found.get("data") or {}
        if ref.key not in data:
            raise DeliveryError(f"Secret {ref.name!r} has no key {ref.key!r}", permanent=True)
        try:
            value = base64.b64decode(data[ref.key], validate=True).decode().strip()
        except (binascii.Error, UnicodeDecodeError):
            raise DeliveryError(
                f"Secret {ref.name!r} key {ref.key!r} is not UTF-8 text", permanent=True
            ) from None
        if not value:
            raise DeliveryError(f"Secret {ref.name!r} key {ref.key!r} is empty", permanent=True)
        return value

    return token


class ClusterSinks(SinkSet):
    """The cluster's BurnInSinks, read before each transition through ``client``."""

    def __init__(
        self,
        client: Client,
        *,
        exporter: Exporter | None = None,
        cluster: Cluster | None = None,
        policy: RetryPolicy = OPERATOR_POLICY,
        sender: Sender | None = None,
        now: Callable[[], datetime] | None = None,
        cluster_from_api: bool = False,
    ) -> None:
        super().__init__(
            exporter=exporter if exporter is not None else Exporter(),
            sender=sender if sender is not None else Sender(policy),
            cluster=cluster,
            now=now or (lambda: datetime.now(UTC)),
        )
        self.client = client
        # The cluster read from the API at the first delivery, not at startup: a replica that
        # is not the leader makes no request of its own, and one that never delivers never
        # asks.
        self._cluster_unread = cluster_from_api and cluster is None
        self._specs: dict[Key, str] = {}  # the spec each built sink was made from
        self._written: dict[Key, BurnInSinkStatus] = {}

    # -- delivering ------------------------------------------------------------------------------
    def deliver(self, transition: Transition) -> bool:
        if self._cluster_unread:
            self._cluster_unread = False
            self.cluster = cluster_of(self.client)
        namespace = transition.run.metadata.namespace or "default"
        keys = [(namespace, name) for name in transition.sinks]
        for key in keys:
            self._refresh(key)
        ok = super().deliver(transition)
        for key in keys:
            self._write_status(key)
        return ok

    def _refresh(self, key: Key) -> None:
        namespace, name = key
        try:
            with api_call(f"get BurnInSink {namespace}/{name}"):
                data = as_dict(self.client.get(SINKS, name, namespace=namespace))
            sink = parsed(BurnInSink, data, f"BurnInSink {namespace}/{name}")
        except NotFound:
            self._drop(key)  # counted a failed delivery by the SinkSet
            return
        except BackendError as e:
            # Not read: the sink built before (if any) still stands; never decided from absence.
            log.warning("%s; delivering with what was read before", e)
            return
        spec = json.dumps(sink.spec.model_dump(mode="json"), sort_keys=True)
        if self._specs.get(key) == spec and key in self.named:
            return
        try:
            built = self.build(sink)
        except DeliveryError as e:
            log.warning("BurnInSink %s/%s cannot deliver: %s", namespace, name, e)
            self._drop(key)
            return
        self._drop(key)
        self.named[key] = built
        self._by_ident[built.ident] = built  # what resend_pending re-sends to
        self._specs[key] = spec

    def build(self, obj: BurnInSink) -> Sink:
        """The sink a BurnInSink object describes."""
        namespace = obj.metadata.namespace or "default"
        ident = f"{namespace}/{obj.name}"
        spec = obj.spec
        if spec.type is SinkType.WEBHOOK and spec.webhook is not None:
            hook = spec.webhook
            ref = hook.token_secret_ref
            return WebhookSink(
                hook.url,
                name=ident,
                token=secret_token(self.client, namespace, ref) if ref is not None else None,
                insecure_skip_verify=bool(hook.insecure_skip_verify),
            )
        if spec.type is SinkType.CONFIG_MAP and spec.config_map is not None:
            return ConfigMapSink(self.client, namespace, spec.config_map.name, ident_name=ident)
        if spec.type is SinkType.PROMETHEUS and self.exporter is not None:
            return PrometheusSink(self.exporter, name=ident)
        raise DeliveryError(f"sink type {spec.type} is not configured", permanent=True)

    def _drop(self, key: Key) -> None:
        old = self.named.pop(key, None)
        self._specs.pop(key, None)
        close = getattr(old, "close", None)
        if callable(close):
            close()

    # -- sink status -----------------------------------------------------------------------------
    def _write_status(self, key: Key) -> None:
        namespace, name = key
        ident = f"{namespace}/{name}"
        if ident not in self.states:
            return
        status = self.status_of(ident)
        if self._written.get(key) == status:
            return
        body: dict[str, Any] = {
            "lastDelivery": rfc3339(status.last_delivery) if status.last_delivery else None,
            "lastError": status.last_error or None,  # a merge-patch null clears it
        }
        if body["lastDelivery"] is None:
            del body["lastDelivery"]  # never delivered yet: nothing to say, nothing to clear
        try:
            with api_call(f"write the status of BurnInSink {ident}"):
                self.client.patch(
                    SINKS.Status,
                    name,
                    {"status": body},
                    namespace=namespace,
                    patch_type=PatchType.MERGE,
                )
        except BackendError as e:  # best-effort (§5.1): the delivery itself is done
            log.warning("%s", e)
            return
        self._written[key] = status
