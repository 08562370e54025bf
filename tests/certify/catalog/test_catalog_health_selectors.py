"""The node-health CEL selectors the catalog and the WorkloadRun builder put on every Job
compile with glimmer's health parser (specs/certify.md §7.1). They are glimmer's own text, not
the user's, so no file can be refused for them: a bad one must fail here, before any Job."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from glimmer.certify.catalog.entries import list_entries
from glimmer.certify.health import detector


def _expressions(data: Any) -> Iterator[str]:
    if isinstance(data, dict):
        monitor = data.get("nodeHealthMonitor")
        if isinstance(monitor, dict):
            yield str((monitor.get("cel") or {}).get("expression"))
        for value in data.values():
            yield from _expressions(value)
    elif isinstance(data, list):
        for value in data:
            yield from _expressions(value)


HEALTHY = {"metadata": {"name": "n"}, "spec": {"unschedulable": False}}
CORDONED = {"metadata": {"name": "n"}, "spec": {"unschedulable": True}}


@pytest.mark.parametrize("entry", list_entries(), ids=lambda e: e.ref)
def test_every_catalog_health_selector_compiles_and_passes_a_healthy_node(entry: Any) -> None:
    found = list(_expressions(entry.data))
    assert found, f"{entry.ref} has no nodeHealthMonitor"
    for expression in found:
        check = detector(expression)  # HealthExpressionError when it does not compile
        # A selector that flags a schedulable, unremarkable node would condemn every node.
        assert check.unhealthy(HEALTHY) is False
        assert check.unhealthy(CORDONED) is True
