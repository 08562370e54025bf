"""The resources the substrate reads and writes, as lightkube resources that are plain JSON.

A CRD's kind is a lightkube generic resource (a dict with the API path attached), built once
from the pydantic model's own group, version, kind and plural, so the path and the model never
disagree. The built-in kinds (Pod, Node, Service, Event) are read the same way — as JSON, not
through lightkube's typed models: those are strict decoders that refuse an object missing a
field the Kubernetes schema calls required (a Node without ``nodeInfo.bootID``, a container
status without ``imageID``), and a pass must not fail because some kubelet reported less than
the schema promises. These raw classes are not registered with lightkube, so its typed models
stay what ``lightkube.resources`` hands out everywhere else.
"""

from __future__ import annotations

from typing import Any

from lightkube.core import resource as res
from lightkube.generic_resource import (
    GenericGlobalResource,
    GenericGlobalStatus,
    GenericNamespacedResource,
    GenericNamespacedStatus,
    create_api_info,
    create_namespaced_resource,
)

from glimmer.api.meta import API_GROUP, Resource
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.sink import BurnInSink
from glimmer.api.test import BurnInTest

VERSION = "v1alpha1"


def generic(model: type[Resource]) -> type[GenericNamespacedResource]:
    """The generic resource of ``model``'s kind (lightkube keeps one per kind)."""
    return create_namespaced_resource(API_GROUP, VERSION, model.KIND, model.PLURAL)


RUNS = generic(BurnInRun)
PROFILES = generic(BurnInProfile)
TESTS = generic(BurnInTest)
SINKS = generic(BurnInSink)


def _status_of(base: type, api_info: res.ApiInfo, kind: str) -> type:
    """The ``status`` subresource class of a raw kind."""
    info = res.ApiInfo(
        resource=api_info.resource,
        parent=api_info.resource,
        plural=api_info.plural,
        verbs=["get", "patch", "put"],
        action="status",
    )
    return type(f"Raw{kind}Status", (base,), {"_api_info": info})


def _raw_namespaced(kind: str, plural: str) -> type[GenericNamespacedResource]:
    info = create_api_info("", "v1", kind, plural)
    status = _status_of(GenericNamespacedStatus, info, kind)
    made = type(f"Raw{kind}", (GenericNamespacedResource,), {"_api_info": info, "Status": status})
    return made


def _raw_global(kind: str, plural: str) -> type[GenericGlobalResource]:
    info = create_api_info("", "v1", kind, plural)
    status = _status_of(GenericGlobalStatus, info, kind)
    made = type(f"Raw{kind}", (GenericGlobalResource,), {"_api_info": info, "Status": status})
    return made


PODS = _raw_namespaced("Pod", "pods")
SERVICES = _raw_namespaced("Service", "services")
EVENTS = _raw_namespaced("Event", "events")
NODES = _raw_global("Node", "nodes")


def as_dict(obj: Any) -> dict[str, Any]:
    """A lightkube object (typed model or generic) as plain JSON data."""
    data: dict[str, Any] = obj.to_dict()
    return data
