"""Artifacts on Kubernetes (§3.6, "Operator storage"): one ConfigMap per run, ``<run>-artifacts``
in the run's namespace, labelled with the run (``burnin.glimmer.ai/run``) and owned by it
(a controller reference, so the cluster's garbage collector deletes it with the run, as it does
the run's pods).

* **where**: key ``<test>.<podName>.<artifactName>``; a UTF-8 payload in ``data``, anything else
  base64 in ``binaryData``; what is refused and the 900 KiB budget are the shared rules
  (:mod:`glimmer.verdict.artifact_refs`), the budget counted from what the ConfigMap already
  holds, read fresh before each write;
* **how**: created if absent; otherwise replaced whole with the ``resourceVersion`` it was read
  at, so a write that raced another is refused (409) rather than losing that writer's entries.
  A replace, not a merge patch, because the ConfigMap sink already needs ``update`` on
  ConfigMaps and a second verb would widen the operator's role for no gain: the precondition
  is the same either way. A 409 (a lost race, or a create that met one just made) is read
  again and retried once; a second one, or any other failure, drops what was to be written
  (``write failed: …``) and the pass goes on — evidence lost is never a phase change;
* **re-harvest**: an entry already held with the same value is not written again, so a pass
  that harvests the same pod after a lost status write writes nothing and returns the same
  refs;
* a ``<run>-artifacts`` ConfigMap the run does not own (a user's, or a predecessor's of the
  same name not yet collected) is never written into: its artifacts are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from lightkube import Client
from lightkube.resources.core_v1 import ConfigMap

from glimmer.api.result import ArtifactRef
from glimmer.api.run import BurnInRun
from glimmer.backends.kubernetes.errors import api_call
from glimmer.backends.kubernetes.executions import owned_by
from glimmer.backends.kubernetes.podspec import owner_reference
from glimmer.backends.kubernetes.resources import as_dict
from glimmer.contract.vocab import Artifact
from glimmer.engine.backend import BackendError, Conflict, NotFound
from glimmer.engine.keys import RUN_LABEL
from glimmer.verdict.artifact_refs import Placement, place, store_name, write_failed

TRIES = 2  # the first write, and one retry after a 409 from a fresh read


def held_entries(config_map: dict[str, Any] | None) -> dict[str, str]:
    """Every entry a ConfigMap holds (text and binary alike), key -> stored value."""
    if config_map is None:
        return {}
    held = {str(k): str(v) for k, v in (config_map.get("data") or {}).items()}
    held.update({str(k): str(v) for k, v in (config_map.get("binaryData") or {}).items()})
    return held


def config_map_body(
    run: BurnInRun, name: str, found: dict[str, Any] | None, placement: Placement
) -> dict[str, Any]:
    """The ConfigMap to write: what ``found`` holds (None: a new one, labelled with and owned
    by ``run``) with ``placement``'s entries added, each in the section its value belongs to."""
    namespace = run.metadata.namespace or "default"
    if found is None:
        meta: dict[str, Any] = {
            "name": name,
            "namespace": namespace,
            "labels": {RUN_LABEL: run.name},
            "ownerReferences": [owner_reference(run.name, run.metadata.uid or "")],
        }
        data: dict[str, str] = {}
        binary: dict[str, str] = {}
    else:
        was = found.get("metadata") or {}
        keep = ("name", "namespace", "labels", "annotations", "ownerReferences", "resourceVersion")
        meta = {k: was[k] for k in keep if was.get(k) is not None}
        data = dict(found.get("data") or {})
        binary = dict(found.get("binaryData") or {})
    for entry in placement.entries:
        into, other = (binary, data) if entry.binary else (data, binary)
        other.pop(entry.key, None)  # a key lives in one section only
        into[entry.key] = entry.value
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data:
        body["data"] = data
    if binary:
        body["binaryData"] = binary
    return body


class KubeArtifacts:
    """The run's artifact ConfigMap through ``client`` (the engine's ``ArtifactStore``)."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def _get(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            with api_call(f"get ConfigMap {namespace}/{name}"):
                return as_dict(self.client.get(ConfigMap, name, namespace=namespace))
        except NotFound:
            return None

    def _write(self, body: dict[str, Any], created: bool) -> None:
        meta = body["metadata"]
        obj = cast(ConfigMap, ConfigMap.from_dict(body))
        if created:
            with api_call(f"create ConfigMap {meta['namespace']}/{meta['name']}"):
                self.client.create(obj, namespace=meta["namespace"])
        else:
            with api_call(f"replace ConfigMap {meta['namespace']}/{meta['name']}"):
                self.client.replace(obj)

    def store(
        self, run: BurnInRun, test: str, pod_name: str, artifacts: Sequence[Artifact]
    ) -> list[ArtifactRef]:
        """Store one execution's ``artifacts``; one ref per artifact, in order."""
        namespace = run.metadata.namespace or "default"
        name = store_name(run.name)
        placement = place(name, test, pod_name, artifacts, {})
        failure = ""
        for attempt in range(1, TRIES + 1):
            try:
                found = self._get(namespace, name)
                if found is not None and not owned_by(found, run.metadata.uid or ""):
                    failure = f"ConfigMap {namespace}/{name} exists and is not owned by this run"
                    break
                placement = place(name, test, pod_name, artifacts, held_entries(found))
                if placement.entries:
                    body = config_map_body(run, name, found, placement)
                    self._write(body, created=found is None)
                return list(placement.refs)
            except Conflict as e:  # a lost race, or a create that met one just made
                failure = str(e)
                if attempt == TRIES:
                    break
            except BackendError as e:
                failure = str(e)
                break
        return list(write_failed(placement, failure))
