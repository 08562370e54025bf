"""The registry of loadable kinds: (apiVersion, kind) -> model class.

The six burn-in kinds are registered here. Other API groups (the fleet declaration) add their own
kind with :func:`register_kind`, so one loader reads every glimmer document.
"""

from __future__ import annotations

from pydantic import BaseModel

from glimmer.api.fingerprint import NodeFingerprint
from glimmer.api.meta import API_VERSION, Resource
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.schedule import BurnInSchedule
from glimmer.api.sink import BurnInSink
from glimmer.api.test import BurnInTest

BURNIN_KINDS: tuple[type[Resource], ...] = (
    BurnInTest,
    BurnInProfile,
    BurnInRun,
    BurnInSchedule,
    BurnInSink,
    NodeFingerprint,
)

_REGISTRY: dict[tuple[str, str], type[BaseModel]] = {
    (API_VERSION, cls.KIND): cls for cls in BURNIN_KINDS
}


def register_kind(api_version: str, kind: str, model: type[BaseModel]) -> None:
    """Make documents of ``apiVersion``/``kind`` load as ``model``."""
    _REGISTRY[(api_version, kind)] = model


def model_for(api_version: str, kind: str) -> type[BaseModel] | None:
    """The model of a document, or None when the pair is not known."""
    return _REGISTRY.get((api_version, kind))


def known_api_versions() -> list[str]:
    """Every apiVersion some registered kind belongs to, sorted."""
    return sorted({v for v, _ in _REGISTRY})


def known_kinds(api_version: str) -> list[str]:
    """The kinds registered under one apiVersion, sorted."""
    return sorted(k for v, k in _REGISTRY if v == api_version)
