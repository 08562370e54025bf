"""Variant expansion: one profile entry becomes one planned test per matrix cell.

Expansion happens before every other plan check, so later stages never know variants exist.
The overlay rule itself lives in :mod:`glimmer.api.overlay`.
"""

from __future__ import annotations

from glimmer.api.overlay import apply_overlay
from glimmer.api.pinned import PlannedTest
from glimmer.api.profile import TestVariant
from glimmer.api.test import BurnInTestSpec


def expand_entry(
    entry_name: str,
    spec: BurnInTestSpec,
    required: bool,
    variants: list[TestVariant] | None,
) -> list[PlannedTest]:
    """The planned tests of one resolved profile entry: itself, or one per variant cell."""
    if not variants:
        return [PlannedTest(name=entry_name, required=required, spec=spec)]
    return [
        PlannedTest(
            name=f"{entry_name}-{cell.name}",
            required=required,
            spec=apply_overlay(spec, cell),
            axes=dict(cell.axes) if cell.axes else None,
            parent=entry_name,
        )
        for cell in variants
    ]
