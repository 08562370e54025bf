"""The operator's handlers, assembled on one registry: every handler module's ``register``.

Each module registers its handlers with explicit ids (a closure's generated id would be
``register.<locals>.fn``), so ids stay stable across releases.
"""

from __future__ import annotations

import kopf

from glimmer.operator import login, runs
from glimmer.operator.context import OperatorContext


def build_registry(context: OperatorContext) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()
    login.register(registry)
    runs.register(registry, context)
    return registry
