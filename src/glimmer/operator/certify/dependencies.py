"""A Workflow's dependencies on the cluster (specs/certify.md §3.4, ADR-034, ADR-053).

* **Order**: a dependency that names another (its JSON holds the other's name, or the name of
  what the other's controller makes, as a string) comes after it; Kahn's algorithm with the
  original index as tie-breaker, the original order when the names form a cycle.
  Deletion goes in reverse creation order.
* **Identity**: each object created carries the tracking label ``certify.glimmer.ai/workflow``
  and the annotation ``certify.glimmer.ai/workflow-uid`` (the Workflow's UID), and is owned by
  the Workflow (cluster-scoped kinds cannot be). A name already taken is adopted only when the
  object carries this Workflow's identity; a foreign one is a :class:`DependencyNameCollision`
  (terminal), one being deleted is waited for.
* **Refs** (``status.dependencyRefs``) say what was created, in creation order, with scope,
  group and iteration, so deletion finds every copy even after a crash.
* **Readiness** (§3.2 launchPendingGroups): a dependency whose own controller makes something
  the workload needs is not ready until that exists — a ComputeDomain until the DRA driver has
  made the ResourceClaimTemplate of its channel (which the pods claim; without it they would
  sit Pending). :func:`ensure` raises :class:`DependencyNotReady` and the next reconcile asks
  again; the dependencies after it in creation order wait with it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from glimmer.backends.kubernetes.certify.ledger import NotReady
from glimmer.backends.kubernetes.errors import AlreadyExists
from glimmer.certify.platform.vocab import GROUP, MANAGED_BY, MANAGED_BY_KEY, WORKFLOW_LABEL
from glimmer.engine.backend import BackendError, Conflict, NotFound
from glimmer.errors import GlimmerError
from glimmer.operator.certify.certification_build import controlled_by, controller_ref
from glimmer.operator.certify.workflow_cluster import (
    Cluster,
    Obj,
    cluster_scoped,
    kind_of,
    meta,
    resource_for,
)

WORKFLOW_UID_ANNOTATION = f"{GROUP}/workflow-uid"


class DependencyNameCollision(GlimmerError):
    """A dependency's name is held by an object of someone else (terminal for the Workflow)."""


class DependencyUnserved(GlimmerError):
    """The API serves no such kind (its CRD is not installed): terminal, and said so."""


class DependencyPending(BackendError):
    """A same-named object is being deleted: the next reconcile tries again."""


class DependencyNotReady(DependencyPending, NotReady):
    """A dependency is there but what its controller makes is not yet: the next reconcile
    looks again (and a job's Job is not created meanwhile)."""


# The API version the DRA driver's ComputeDomain controller makes its channel template in.
CLAIM_TEMPLATE_VERSION = "resource.k8s.io/v1beta1"


def _awaited(body: Mapping[str, Any]) -> tuple[Any, str] | None:
    """(kind, name) of what ``body``'s own controller must make before it is ready, if any."""
    if body.get("kind") == "ComputeDomain":
        spec = body.get("spec") or {}
        channel = ((spec.get("channel") or {}).get("resourceClaimTemplate") or {}).get("name")
        if channel:
            return resource_for(CLAIM_TEMPLATE_VERSION, "ResourceClaimTemplate"), str(channel)
    return None


def _name(dep: Any) -> str:
    return str((dep.get("metadata") or {}).get("name", "")) if isinstance(dep, dict) else ""


def _stands_for(dep: Any) -> set[str]:
    """The names a dependency stands for: its own, and that of what its controller makes for it
    (a ComputeDomain's channel template, which a runtime claims: the runtime comes after)."""
    if not isinstance(dep, dict):
        return set()
    awaited = _awaited(dep)
    return {n for n in (_name(dep), awaited[1] if awaited else "") if n}


def creation_order(deps: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``deps`` with every dependency after the ones it names (stable; a cycle keeps the
    original order)."""
    names = [_stands_for(d) for d in deps]
    texts = [json.dumps(d) for d in deps]
    needs = {
        i: {
            j
            for j, others in enumerate(names)
            if j != i and any(json.dumps(o) in t for o in others)
        }
        for i, t in enumerate(texts)
    }
    done: list[int] = []
    left = set(range(len(deps)))
    while left:
        ready = sorted(i for i in left if needs[i] <= set(done))
        if not ready:
            return list(deps)  # a cycle: the author's order
        done.append(ready[0])
        left.discard(ready[0])
    return [deps[i] for i in done]


def has_identity(obj: Mapping[str, Any], workflow: Mapping[str, Any]) -> bool:
    """Whether ``obj`` was created for ``workflow`` (owner UID, the workflow-uid annotation,
    or the legacy tracking label when neither is set)."""
    uid = str(meta(workflow).get("uid") or "")
    m = meta(obj)
    if controlled_by(obj, uid):
        return True
    annotations = m.get("annotations") or {}
    if WORKFLOW_UID_ANNOTATION in annotations:
        return bool(annotations[WORKFLOW_UID_ANNOTATION] == uid)
    return bool((m.get("labels") or {}).get(WORKFLOW_LABEL) == meta(workflow).get("name"))


def prepared(dep: Mapping[str, Any], workflow: Mapping[str, Any]) -> Obj:
    """The object to create for ``dep``: namespace defaulted, identity and owner added, the
    catalog's ``when`` guard dropped."""
    out: Obj = copy.deepcopy(dict(dep))
    out.pop("when", None)
    m = out.setdefault("metadata", {})
    wm = meta(workflow)
    kind = str(out.get("kind") or "")
    if not cluster_scoped(kind):
        m.setdefault("namespace", wm.get("namespace") or "default")
        m["ownerReferences"] = [*(m.get("ownerReferences") or []), controller_ref(workflow)]
    m["labels"] = {
        **(m.get("labels") or {}),
        MANAGED_BY_KEY: MANAGED_BY,
        WORKFLOW_LABEL: str(wm.get("name") or ""),
    }
    m["annotations"] = {**(m.get("annotations") or {}), WORKFLOW_UID_ANNOTATION: wm.get("uid")}
    return out


def dependency_ref(obj: Mapping[str, Any], scope: str, group: str = "") -> Obj:
    m = meta(obj)
    ref: Obj = {
        "apiVersion": str(obj.get("apiVersion") or "v1"),
        "kind": str(obj.get("kind") or ""),
        "name": str(m.get("name") or ""),
        "scope": scope,
    }
    if m.get("namespace"):
        ref["namespace"] = m["namespace"]
    if group:
        ref["groupName"] = group
    return ref


def planned_refs(
    deps: Sequence[Mapping[str, Any]],
    workflow: Mapping[str, Any],
    scope: str = "workflow",
    group: str = "",
) -> list[Obj]:
    """The refs :func:`ensure` will create ``deps`` under, in creation order, before any is
    created: a caller records them first, so a crash after a create leaves nothing unrecorded."""
    return [dependency_ref(prepared(d, workflow), scope, group) for d in creation_order(deps)]


def ensure(
    cluster: Cluster,
    deps: Sequence[Mapping[str, Any]],
    workflow: Mapping[str, Any],
    scope: str = "workflow",
    group: str = "",
) -> list[Obj]:
    """Create every dependency missing, in creation order (idempotent); their refs."""
    refs: list[Obj] = []
    for dep in creation_order(deps):
        body = prepared(dep, workflow)
        kind = kind_of(body)
        namespace = meta(body).get("namespace")
        try:
            cluster.create(kind, body, namespace)
        except NotFound:
            raise DependencyUnserved(
                f"{body.get('apiVersion')} {body.get('kind')} {_name(body)}: the API serves no "
                "such kind (is its CRD installed?)"
            ) from None
        except AlreadyExists:
            found = cluster.get(kind, _name(body), namespace)
            if found is None or meta(found).get("deletionTimestamp"):
                raise DependencyPending(
                    f"{body.get('kind')} {namespace}/{_name(body)} is being deleted"
                ) from None
            if not has_identity(found, workflow):
                raise DependencyNameCollision(
                    f"{body.get('kind')} {namespace}/{_name(body)} exists and was not created "
                    f"for Workflow {meta(workflow).get('name')}"
                ) from None
        refs.append(dependency_ref(body, scope, group))
        awaited = _awaited(body)
        if awaited is not None and cluster.get(awaited[0], awaited[1], namespace) is None:
            raise DependencyNotReady(
                f"{body.get('kind')} {namespace}/{_name(body)} is not ready: its controller has "
                f"not made {awaited[0].__name__.removeprefix('Certify')} {awaited[1]} yet"
            )
    return refs


def delete_in_reverse(
    cluster: Cluster, refs: Sequence[Mapping[str, Any]], workflow: Mapping[str, Any]
) -> int:
    """Delete the dependencies of ``refs`` in reverse creation order, only those carrying
    ``workflow``'s identity, each with a UID precondition; how many still exist (being
    deleted)."""
    left = 0
    for ref in reversed(list(refs)):
        kind = kind_of(ref)
        namespace = ref.get("namespace")
        found = cluster.get(kind, str(ref["name"]), namespace)
        if found is None or not has_identity(found, workflow):
            continue
        try:
            cluster.delete(kind, str(ref["name"]), namespace, uid=str(meta(found).get("uid")))
        except Conflict:
            continue  # replaced by another object since the read: not ours
        if cluster.get(kind, str(ref["name"]), namespace) is not None:
            left += 1
    return left
