"""kopf daemons that hold nothing needing a finalizer.

``kopf.daemon`` always asks for a finalizer on the objects it serves (kopf's stop protocol). A
BurnInRun daemon holds nothing (the engine's own ``burnin.glimmer.ai/cordon-cleanup`` holds the
run until its cordons are released) and a BurnInSchedule daemon holds nothing at all, and a
second finalizer would make a delete wait for an operator. kopf has no public switch for it, so
the registered handler is replaced by one that does not require it: this reaches into kopf's
registry (``_spawning._handlers``), which is why pyproject bounds kopf to the minor release this
was written against, and why ``tests/operator/test_operator_run.py`` checks that no kopf
finalizer appears on a run.
"""

from __future__ import annotations

import dataclasses

import kopf


def without_kopf_finalizer(registry: kopf.OperatorRegistry, handler_id: str) -> None:
    """The daemon ``handler_id`` on ``registry`` registered as needing no finalizer."""
    spawning = registry._spawning
    found = [h for h in spawning._handlers if h.id == handler_id]
    if not found:
        raise RuntimeError(f"no kopf daemon {handler_id!r} to free of its finalizer")
    spawning._handlers = [
        dataclasses.replace(h, requires_finalizer=False) if h.id == handler_id else h
        for h in spawning._handlers
    ]
