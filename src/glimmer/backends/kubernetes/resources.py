"""The glimmer custom resources as lightkube generic resources, one class per kind.

lightkube ships typed models for the built-in kinds (Pod, Node, Service, Event); a CRD's kind
is a generic resource (a dict with the API path attached) built once from the pydantic model's
own group, version, kind and plural, so the path and the model never disagree.
"""

from __future__ import annotations

from typing import Any

from lightkube.generic_resource import GenericNamespacedResource, create_namespaced_resource

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


def as_dict(obj: Any) -> dict[str, Any]:
    """A lightkube object (typed model or generic) as plain JSON data."""
    data: dict[str, Any] = obj.to_dict()
    return data
