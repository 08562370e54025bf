"""What the API server does with each verb, independent of HTTP: the cluster's state machine.

The rules a controller depends on, as a real API server keeps them:
- every write gets a new ``resourceVersion`` from one counter; a write that changes nothing is
  a no-op (same resourceVersion, no watch event); ``generation`` counts spec changes;
- create fills ``uid``, ``creationTimestamp``, a name from ``generateName``, and answers 409
  AlreadyExists; a namespaced object needs its namespace to exist;
- a ``metadata.resourceVersion`` in a PUT or a patch is a precondition: stale means 409; a PUT
  of a custom resource must carry one (422 otherwise, as for CRDs on a real server);
- with a status subresource, ``/status`` writes change only ``.status`` and writes to the main
  resource keep the stored status (a custom resource is created without the status it carries);
- DELETE of an object with finalizers sets ``deletionTimestamp`` (a new resourceVersion) and the
  object goes when its last finalizer is removed; a bound, running Pod is deleted gracefully —
  it stays, terminating, until its kubelet deletes it with grace period 0 (unless
  ``graceful_pod_deletion`` is off); dependents named by ``ownerReferences`` are deleted with
  their owner (background propagation), and a namespace takes its objects with it;
- ``pods/binding`` (served when ``pod_binding`` is on) sets an unbound pod's ``nodeName``, a
  scheduler's one way to, since a pod's spec is otherwise immutable; a bound pod is then
  deleted gracefully like any other;
- a CRD written through the API registers (or updates, or removes) its resource type.
Writes of custom resources and Pods are validated (and custom resources pruned) by
``validation.Validator`` before they are stored; kind-specific defaults and immutable fields
live in ``kinds``.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tools.k8s_standin import errors, kinds, patching
from tools.k8s_standin.resources import CRD_KEY, Registry, ResourceType, from_crd
from tools.k8s_standin.selectors import Selector
from tools.k8s_standin.store import Event, Obj, Store, Subscription, meta
from tools.k8s_standin.validation import Validator

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # what the API server draws generateName from
_SYSTEM_META = (
    "uid",
    "creationTimestamp",
    "resourceVersion",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "name",
    "namespace",
)


def _fresh(obj: Obj) -> Obj:
    """A new top level and a new metadata over the same subtrees. Stored objects are never
    mutated, so a new version may share every subtree it does not change with the old one."""
    out = dict(obj)
    out["metadata"] = dict(meta(obj))
    return out


def _same(a: Obj, b: Obj, skip: frozenset[str], skip_meta: frozenset[str] = frozenset()) -> bool:
    """``a`` and ``b`` equal but for the top-level fields ``skip`` and the metadata fields
    ``skip_meta`` (compared in place: no copies of a large status)."""
    if any(a.get(k) != b.get(k) for k in (a.keys() | b.keys()) - skip - {"metadata"}):
        return False
    if "metadata" in skip:
        return True
    ma, mb = meta(a), meta(b)
    return all(ma.get(k) == mb.get(k) for k in (ma.keys() | mb.keys()) - skip_meta)


_VOLATILE_META = frozenset({"resourceVersion", "managedFields"})


# Parsed once per process and file version: every test starts a fresh API with the same CRDs
# (create() copies what it stores, so the cached documents are never changed).
_PARSED: dict[Path, tuple[float, list[Any]]] = {}


def _documents(path: Path) -> list[Any]:
    mtime = path.stat().st_mtime
    hit = _PARSED.get(path)
    if hit is None or hit[0] != mtime:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        hit = (mtime, list(yaml.load_all(path.read_text(), Loader=loader)))
        _PARSED[path] = hit
    return hit[1]


class Cluster:
    def __init__(
        self,
        *,
        crd_dirs: Iterable[Path] = (),
        graceful_pod_deletion: bool = True,
        pod_binding: bool = False,
        rng: random.Random | None = None,
    ) -> None:
        self.registry = Registry()
        self.store = Store()
        self.validator = Validator()
        self.graceful_pod_deletion = graceful_pod_deletion
        if not pod_binding:
            # Off by default: the kubelet stand-in falls back to keeping its choice of node.
            pods = self._type("", "pods")
            self.registry.add(
                dataclasses.replace(pods, subresources=pods.subresources - {"binding"})
            )
        self._rng = rng or random.Random()
        self._next_ip = 1
        # Created by the system, as a fresh cluster has them.
        ns_type = self._type("", "namespaces")
        for name in DEFAULT_NAMESPACES:
            self.create(
                ns_type, None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
            )
        for folder in crd_dirs:
            self.preload_crds(folder)

    def _type(self, group: str, plural: str) -> ResourceType:
        rtype = self.registry.get(group, plural)
        assert rtype is not None
        return rtype

    # --- CRDs -------------------------------------------------------------------------------

    def preload_crds(self, folder: Path) -> list[str]:
        """Create every CRD in the YAML files of ``folder`` (already present ones are kept)."""
        crd_type = self._type(*CRD_KEY)
        names = []
        for path in sorted(folder.glob("*.yaml")):
            for doc in _documents(path):
                if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                    continue
                name = doc["metadata"]["name"]
                if self.store.get(CRD_KEY, ("", name)) is None:
                    self.create(crd_type, None, doc)
                names.append(name)
        return names

    def _crd_changed(self, crd: Obj | None, gone: Obj | None) -> None:
        if gone is not None:
            old = from_crd(gone)
            if crd is None:
                self.registry.remove(old.key)
                self.validator.forget(old)
                self.store.drop_type(old.key)
        if crd is not None:
            rtype = from_crd(crd)
            self.registry.add(rtype)
            self.validator.learn(rtype)

    # --- reads ------------------------------------------------------------------------------

    def get(self, rtype: ResourceType, namespace: str | None, name: str) -> Obj:
        obj = self.store.get(rtype.key, (namespace or "", name))
        if obj is None:
            raise errors.not_found(rtype, name)
        return obj

    def list_objects(
        self, rtype: ResourceType, namespace: str | None, selector: Selector
    ) -> tuple[list[Obj], str]:
        items = [
            o
            for o in self.store.items(rtype.key, namespace)
            if selector.empty or selector.matches(o)
        ]
        items.sort(key=lambda o: (meta(o).get("namespace", ""), meta(o)["name"]))
        return items, str(self.store.rv)

    def watch(
        self, rtype: ResourceType, namespace: str | None, selector: Selector, since: str | None
    ) -> tuple[list[Event], Subscription]:
        """The events to send first and the subscription for the rest, taken in one step."""
        if since in (None, "", "0"):
            backlog = [
                Event("ADDED", int(meta(o)["resourceVersion"]), o, None)
                for o in self.list_objects(rtype, namespace, selector)[0]
            ]
        else:
            try:
                rv = int(since)
            except ValueError:
                raise errors.bad_request(f"invalid resourceVersion: {since!r}") from None
            found = self.store.events_since(rtype.key, rv)
            if found is None:
                raise errors.gone(f"too old resource version: {rv} ({self.store.rv})")
            backlog = found
        return backlog, self.store.subscribe(rtype.key)

    # --- writes -----------------------------------------------------------------------------

    def create(
        self, rtype: ResourceType, namespace: str | None, body: Any, *, dry_run: bool = False
    ) -> Obj:
        if not isinstance(body, dict):
            raise errors.bad_request("the request body must be a JSON object")
        obj = copy.deepcopy(body)
        md = obj.setdefault("metadata", {})
        if not isinstance(md, dict):
            raise errors.bad_request("metadata must be an object")
        if rtype.namespaced:
            ns = namespace or md.get("namespace") or "default"
            if md.get("namespace") and md["namespace"] != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request"
                )
            md["namespace"] = ns
            if self.store.get(("", "namespaces"), ("", ns)) is None:
                raise errors.not_found(self._type("", "namespaces"), ns)
        else:
            md.pop("namespace", None)
        if not md.get("name"):
            if md.get("generateName"):
                md["name"] = md["generateName"] + "".join(
                    self._rng.choice(_NAME_CHARS) for _ in range(5)
                )
            else:
                raise errors.invalid(
                    rtype,
                    "",
                    [
                        errors.Cause(
                            "metadata.name",
                            "Required value: name or generateName is required",
                            "FieldValueRequired",
                        )
                    ],
                )
        obj.setdefault("apiVersion", rtype.api_version)
        obj.setdefault("kind", rtype.kind)
        if self.store.get(rtype.key, (md.get("namespace", ""), md["name"])) is not None:
            raise errors.already_exists(rtype, md["name"])
        for field in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds"):
            md.pop(field, None)
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = kinds.now()
        md["generation"] = 1
        if rtype.crd_version is not None and rtype.has_status:
            obj.pop("status", None)  # written through /status only, as the CRD strategy does
        kinds.defaults(rtype, obj, self._cluster_ip)
        if rtype.key == CRD_KEY:
            obj = kinds.established(obj)
        obj = self.validator.admit(rtype, obj, None)
        if dry_run:
            return obj
        md = obj["metadata"]
        md["resourceVersion"] = self.store.next_rv()
        self.store.put(rtype.key, obj, None)
        if rtype.key == CRD_KEY:
            self._crd_changed(obj, None)
        return obj

    def replace(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        status: bool = False,
        dry_run: bool = False,
    ) -> Obj:
        if not isinstance(body, dict):
            raise errors.bad_request("the request body must be a JSON object")
        old = self.get(rtype, namespace, name)
        body_md = body.get("metadata")
        if rtype.crd_version is not None and not (
            isinstance(body_md, dict) and body_md.get("resourceVersion")
        ):
            # Custom resources allow no unconditional update (kube-apiserver's CRD strategy).
            cause = errors.Cause(
                "metadata.resourceVersion", "Invalid value: 0x0: must be specified for an update"
            )
            raise errors.invalid(rtype, name, [cause])
        if isinstance(body_md, dict) and body_md.get("name") not in (None, name):
            raise errors.bad_request("the name of the object does not match the name on the URL")
        return self._update(rtype, old, dict(body), status=status, dry_run=dry_run)

    def patch(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        content_type: str,
        body: Any,
        *,
        status: bool = False,
        dry_run: bool = False,
    ) -> tuple[Obj, bool]:
        """The patched object, and whether the patch created it (server-side apply only)."""
        okey = (namespace or "", name) if rtype.namespaced else ("", name)
        old = self.store.get(rtype.key, okey)
        if old is None:
            if content_type == patching.APPLY and not status:
                if not isinstance(body, dict):
                    raise errors.bad_request("an apply patch must be an object")
                created = dict(body)
                created["metadata"] = dict(body.get("metadata") or {}, name=name)
                return self.create(rtype, namespace, created, dry_run=dry_run), True
            raise errors.not_found(rtype, name)
        if content_type == patching.STRATEGIC and rtype.crd_version is not None:
            raise errors.APIError(
                415,
                "UnsupportedMediaType",
                "strategic merge patch is not supported for custom resources: use a merge patch",
            )
        try:
            new = patching.apply_patch(content_type, old, body)
        except patching.PatchError as exc:
            raise errors.APIError(422, "Invalid", str(exc)) from None
        return self._update(rtype, old, new, status=status, dry_run=dry_run), False

    def bind(self, rtype: ResourceType, namespace: str | None, name: str, body: Any) -> Obj:
        """``pods/binding``: what a scheduler does — sets ``spec.nodeName`` of an unbound pod."""
        pod = self.get(rtype, namespace, name)
        target = body.get("target") if isinstance(body, dict) else None
        node = target.get("name") if isinstance(target, dict) else None
        if not node or (isinstance(target, dict) and target.get("kind", "Node") != "Node"):
            raise errors.bad_request("a Binding needs target.kind Node and target.name")
        bound = (pod.get("spec") or {}).get("nodeName")
        if bound:
            raise errors.conflict(rtype, name, f'pod {name} is already assigned to node "{bound}"')
        if meta(pod).get("deletionTimestamp"):
            raise errors.conflict(
                rtype, name, f"pod {name} is being deleted, cannot be assigned to a host"
            )
        new = _fresh(pod)
        new["spec"] = dict(pod.get("spec") or {}, nodeName=node)
        return self._store(rtype, new, pod)

    def delete(
        self,
        rtype: ResourceType,
        namespace: str | None,
        name: str,
        options: Mapping[str, Any],
        *,
        dry_run: bool = False,
    ) -> Obj:
        old = self.get(rtype, namespace, name)
        md = meta(old)
        pre = options.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != md.get("uid"):
            raise errors.conflict(
                rtype,
                name,
                f"Precondition failed: UID in precondition: {pre['uid']}, "
                f"UID in object meta: {md.get('uid')}",
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != md.get("resourceVersion"):
            raise errors.conflict(
                rtype, name, "Precondition failed: ResourceVersion in precondition does not match"
            )
        if dry_run:
            return old
        if rtype.key == ("", "namespaces"):
            for rkey, child in self.store.in_namespace(name):
                child_type = self.registry.get(*rkey)
                if (
                    child_type is not None
                    and self.store.get(rkey, (name, meta(child)["name"])) is not None
                ):
                    self.delete(child_type, name, meta(child)["name"], {"gracePeriodSeconds": 0})
        grace = self._grace(rtype, old, options)
        if md.get("deletionTimestamp"):
            if grace is None and md.get("deletionGracePeriodSeconds"):
                # The kubelet's final, grace-0 delete of a terminating Pod.
                marked = _fresh(old)
                marked["metadata"]["deletionGracePeriodSeconds"] = 0
                return self._store(rtype, marked, old)
            if grace is None and not md.get("finalizers"):
                return self._remove(rtype, old)
            return old
        if md.get("finalizers") or grace:
            marked = _fresh(old)
            marked["metadata"]["deletionTimestamp"] = kinds.later(grace or 0)
            marked["metadata"]["deletionGracePeriodSeconds"] = grace or 0
            if rtype.kind == "Namespace":
                marked["status"] = dict(old.get("status") or {}, phase="Terminating")
            return self._store(rtype, marked, old)
        return self._remove(rtype, old)

    # --- internals --------------------------------------------------------------------------

    def _grace(self, rtype: ResourceType, pod: Obj, options: Mapping[str, Any]) -> int | None:
        """A Pod's grace period when its deletion must wait for its kubelet, else None."""
        if rtype.key != ("", "pods") or not self.graceful_pod_deletion:
            return None
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return None
        grace = options.get("gracePeriodSeconds")
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds", 30)
        return int(grace) if int(grace) > 0 else None

    def _cluster_ip(self) -> str:
        ip = f"10.96.{self._next_ip // 250}.{self._next_ip % 250 + 1}"
        self._next_ip += 1
        return ip

    def _update(
        self, rtype: ResourceType, old: Obj, new: Obj, *, status: bool, dry_run: bool
    ) -> Obj:
        old_md = meta(old)
        new_md = new.get("metadata")
        if not isinstance(new_md, dict):
            new_md = new["metadata"] = {}
        wanted_rv = new_md.get("resourceVersion")
        if wanted_rv not in (None, "") and wanted_rv != old_md.get("resourceVersion"):
            raise errors.conflict(rtype, old_md["name"])
        if status and rtype.has_status:
            result = _fresh(old)
            if "status" in new:
                result["status"] = new["status"]
            else:
                result.pop("status", None)
        else:
            result = new
            result["metadata"] = dict(new_md)
            if rtype.has_status and not status:
                if "status" in old:
                    result["status"] = old["status"]
                else:
                    result.pop("status", None)
            md = result["metadata"]
            for field in _SYSTEM_META:
                if field in old_md:
                    md[field] = old_md[field]
                else:
                    md.pop(field, None)
            if old_md.get("deletionTimestamp"):
                added = set(md.get("finalizers") or ()) - set(old_md.get("finalizers") or ())
                if added:
                    raise errors.invalid(
                        rtype,
                        old_md["name"],
                        [
                            errors.Cause(
                                "metadata.finalizers",
                                "Forbidden: no new finalizers can be added if the object is "
                                "being deleted",
                                "FieldValueForbidden",
                            )
                        ],
                    )
        result.setdefault("apiVersion", old.get("apiVersion", rtype.api_version))
        result.setdefault("kind", old.get("kind", rtype.kind))
        kinds.check_immutable(rtype, old, result)
        result = self.validator.admit(rtype, result, old)
        if self._bumps_generation(rtype, old, result):
            result["metadata"]["generation"] = int(old_md.get("generation", 1)) + 1
        if _same(result, old, frozenset(), _VOLATILE_META):
            return old  # a no-op write: no new resourceVersion, no event
        if dry_run:
            return result
        stored = self._store(rtype, result, old)
        if rtype.key == CRD_KEY:
            self._crd_changed(stored, old)
        return stored

    def _bumps_generation(self, rtype: ResourceType, old: Obj, new: Obj) -> bool:
        ignored = {"metadata"}
        if rtype.has_status or rtype.key in (("", "pods"), ("", "nodes")):
            ignored.add("status")
        return not _same(old, new, frozenset(ignored))

    def _store(self, rtype: ResourceType, obj: Obj, old: Obj) -> Obj:
        obj["metadata"]["resourceVersion"] = self.store.next_rv()
        md = obj["metadata"]
        if (
            md.get("deletionTimestamp")
            and not md.get("finalizers")
            and not self._awaits_kubelet(rtype, obj)
        ):
            return self._remove(rtype, obj, prev=old)
        self.store.put(rtype.key, obj, old)
        return obj

    def _awaits_kubelet(self, rtype: ResourceType, obj: Obj) -> bool:
        """A terminating Pod stays until its kubelet deletes it with grace period 0."""
        return rtype.key == ("", "pods") and bool(obj["metadata"].get("deletionGracePeriodSeconds"))

    def _remove(self, rtype: ResourceType, obj: Obj, prev: Obj | None = None) -> Obj:
        final = _fresh(obj)
        final["metadata"]["resourceVersion"] = self.store.next_rv()
        self.store.remove(rtype.key, final, prev or obj)
        if rtype.key == CRD_KEY:
            self._crd_changed(None, final)
        self._collect_dependents(meta(final).get("uid"))
        return final

    def _collect_dependents(self, uid: str | None) -> None:
        if not uid:
            return
        for rkey, okey in self.store.owned_by(uid):
            child_type = self.registry.get(*rkey)
            if child_type is None or self.store.get(rkey, okey) is None:
                continue
            self.delete(child_type, okey[0] or None, okey[1], {})
