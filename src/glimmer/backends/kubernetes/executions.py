"""Executions on Kubernetes: one runner Pod each, and the headless Services they meet in.

* **create**: the Pod of :func:`~glimmer.backends.kubernetes.podspec.pod_of`, carrying the
  request it was made from (annotation ``burnin.glimmer.ai/execution``, the JSON of
  :mod:`glimmer.backends.common.specs`), so a restarted process reads back exactly what the
  engine asked for. Create-if-absent: ``409 AlreadyExists`` is the pod already there (its
  name is deterministic, so that is this very execution); any other 409 is a lost race and
  a :class:`~glimmer.engine.backend.Conflict` — the pod was not created and the pass retries;
* **observe**: ONE LIST per pass of the run's pods by the label ``burnin.glimmer.ai/run``,
  kept only when their controller reference names the run's uid (a recreated run of the same
  name owns none of its predecessor's). A pod being deleted (``deletionTimestamp``) is still
  listed with the phase its kubelet reports: until the kubelet has stopped it, it still loads
  its node, so the node stays busy and cordoned (§2.6) rather than taking new load early;
* **logs**: the ``pods/log`` subresource of the ``runner`` container; whatever the API
  answers instead (400 "waiting to start", 404) is
  :class:`~glimmer.engine.backend.LogUnavailable` with the server's words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from lightkube import ApiError, Client

from glimmer.api.k8s import Toleration
from glimmer.backends.common.specs import spec_from_json, spec_to_json
from glimmer.backends.kubernetes.errors import AlreadyExists, api_call, code_of
from glimmer.backends.kubernetes.pod_status import execution_of
from glimmer.backends.kubernetes.podspec import (
    RUNNER_CONTAINER,
    pod_of,
    rendezvous_address,
    service_of,
)
from glimmer.backends.kubernetes.resources import PODS, SERVICES, as_dict
from glimmer.engine.backend import (
    Execution,
    ExecutionIndex,
    ExecutionSpec,
    LogUnavailable,
    NotFound,
    Rendezvous,
)
from glimmer.engine.keys import DOMAIN, RUN_LABEL

SPEC_ANNOTATION = f"{DOMAIN}/execution"

# The run's own tolerations (spec.target.tolerations), looked up when a pod is created.
Tolerations = Callable[[str, str, str], Sequence[Toleration]]


def _no_tolerations(namespace: str, run: str, run_uid: str) -> Sequence[Toleration]:
    return ()


def owned_by(obj: dict[str, Any], run_uid: str) -> bool:
    """Whether ``obj``'s controller reference names the run of ``run_uid``."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return any(r.get("uid") == run_uid and r.get("kind") == "BurnInRun" for r in refs)


def pod_manifest(spec: ExecutionSpec, tolerations: Sequence[Toleration] = ()) -> dict[str, Any]:
    """The Pod created for ``spec``: its shape, the run label, and the request it came from."""
    pod = pod_of(spec, tolerations)
    meta = pod["metadata"]
    meta["labels"] = {**meta["labels"], RUN_LABEL: spec.run}
    record = json.dumps(spec_to_json(spec), separators=(",", ":"), sort_keys=True)
    meta["annotations"] = {**meta["annotations"], SPEC_ANNOTATION: record}
    return pod


class KubeExecutions:
    """Runner pods and rendezvous Services through ``client`` (the engine's ``Executions``).

    ``on_clock`` maps the cluster's timestamps onto the substrate clock; ``tolerations``
    answers the run's own tolerations for a pod about to be created."""

    def __init__(
        self,
        client: Client,
        on_clock: Callable[[datetime], datetime] = lambda moment: moment,
        tolerations: Tolerations = _no_tolerations,
    ) -> None:
        self.client = client
        self.on_clock = on_clock
        self.tolerations = tolerations
        # A pod's request never changes once created: parsed once per pod, by its uid, and
        # kept per run only for the pods its last listing held (an operator runs for months).
        self._specs: dict[tuple[str, str, str], dict[str, ExecutionSpec]] = {}

    # -- observe ------------------------------------------------------------------------------
    def _pods(self, namespace: str, run: str, run_uid: str) -> list[dict[str, Any]]:
        with api_call(f"list pods of run {namespace}/{run}"):
            found = self.client.list(PODS, namespace=namespace, labels={RUN_LABEL: run})
            pods = [as_dict(p) for p in found]
        return [p for p in pods if owned_by(p, run_uid)]

    @staticmethod
    def _spec(pod: dict[str, Any], known: dict[str, ExecutionSpec]) -> ExecutionSpec | None:
        meta = pod.get("metadata") or {}
        spec = known.get(str(meta.get("uid")))
        if spec is None:
            record = (meta.get("annotations") or {}).get(SPEC_ANNOTATION)
            if record is None:
                return None  # a pod glimmer did not create, whatever its labels say
            spec = spec_from_json(json.loads(record))
        return spec

    def executions(self, namespace: str, run: str, run_uid: str) -> ExecutionIndex:
        key = (namespace, run, run_uid)
        known = self._specs.get(key, {})
        seen: dict[str, ExecutionSpec] = {}
        found: list[Execution] = []
        for pod in self._pods(namespace, run, run_uid):
            spec = self._spec(pod, known)
            if spec is None:
                continue
            seen[str(pod["metadata"].get("uid"))] = spec
            found.append(execution_of(pod, spec, self.on_clock))
        self._specs[key] = seen
        return ExecutionIndex(found)

    # -- act ----------------------------------------------------------------------------------
    def create_execution(self, spec: ExecutionSpec) -> None:
        tolerations = self.tolerations(spec.namespace, spec.run, spec.run_uid)
        manifest = pod_manifest(spec, tolerations)
        try:
            with api_call(f"create pod {spec.namespace}/{spec.name}"):
                self.client.create(PODS.from_dict(manifest), namespace=spec.namespace)
        except AlreadyExists:
            pass  # the deterministic name is taken: this very execution exists already

    def delete_execution(self, namespace: str, name: str) -> None:
        try:
            with api_call(f"delete pod {namespace}/{name}"):
                self.client.delete(PODS, name, namespace=namespace)
        except NotFound:
            pass

    def read_log(self, namespace: str, name: str) -> str:
        try:
            lines = self.client.log(name, namespace=namespace, container=RUNNER_CONTAINER)
            return "".join(lines)
        except ApiError as e:
            said = e.status.message or e.status.reason or str(code_of(e))
            raise LogUnavailable(f"log of pod {namespace}/{name}: {said}") from e
        except Exception as e:  # the transport: refused, reset, timed out
            raise LogUnavailable(f"log of pod {namespace}/{name}: {e}") from e

    def ensure_rendezvous(self, service: Rendezvous) -> None:
        manifest = service_of(service)
        try:
            with api_call(f"create service {service.namespace}/{service.name}"):
                self.client.create(SERVICES.from_dict(manifest), namespace=service.namespace)
        except AlreadyExists:
            pass

    def rendezvous_address(self, namespace: str, rendezvous: str, role: str) -> str:
        return rendezvous_address(namespace, rendezvous, role)

    def delete_owned(self, namespace: str, run: str, run_uid: str) -> None:
        """Delete every pod and Service the run owns (the garbage collector's work, done at
        once so nothing of a deleted run outlives it on a cluster without one)."""
        self._specs.pop((namespace, run, run_uid), None)
        for pod in self._pods(namespace, run, run_uid):
            self.delete_execution(namespace, pod["metadata"]["name"])
        with api_call(f"list services of run {namespace}/{run}"):
            services = [
                as_dict(s)
                for s in self.client.list(SERVICES, namespace=namespace, labels={RUN_LABEL: run})
            ]
        for svc in services:
            if owned_by(svc, run_uid):
                try:
                    with api_call(f"delete service {namespace}/{svc['metadata']['name']}"):
                        self.client.delete(SERVICES, svc["metadata"]["name"], namespace=namespace)
                except NotFound:
                    pass
