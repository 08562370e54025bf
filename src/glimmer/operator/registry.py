"""The operator's handlers, assembled on one registry: every handler module's ``register``.

Each module registers its handlers with explicit ids (a closure's generated id would be
``register.<locals>.fn``), so ids stay stable across releases.
"""

from __future__ import annotations

from collections.abc import Callable

import kopf

from glimmer.operator import certify, exporter, fingerprints, login, runs, schedules
from glimmer.operator.context import OperatorContext


def assemble(
    context: OperatorContext,
    metrics: tuple[str, int] | None = None,
    *,
    allow_plain_http_exports: bool = False,
) -> tuple[kopf.OperatorRegistry, Callable[[float], bool]]:
    """Every reconciler of the operator on one registry (``/metrics`` served at ``metrics``,
    host and port, when given; ReportExports to http:// webhooks where
    ``allow_plain_http_exports``), and the drain of its engine passes (see
    :meth:`.passes.Passes.drain`)."""
    registry = kopf.OperatorRegistry()
    login.register(registry)
    handlers = runs.register(registry, context)
    schedules.register(registry, context)
    fingerprints.register(registry, context)
    certify.register(registry, context, allow_plain_http_exports=allow_plain_http_exports)
    if metrics is not None:
        exporter.register(registry, context, host=metrics[0], port=metrics[1])
    return registry, handlers.passes.drain


def build_registry(
    context: OperatorContext, metrics: tuple[str, int] | None = None
) -> kopf.OperatorRegistry:
    """:func:`assemble`'s registry alone."""
    return assemble(context, metrics)[0]
