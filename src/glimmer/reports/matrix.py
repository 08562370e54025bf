"""How a per-product variant matrix is presented: as its parent test, one verdict per node.

A ``gpuClass`` matrix (contract.gpu_class) runs every cell on every node, and each node is
judged by the one cell of its class while the others Skip. Shown cell by cell, every node would
carry three Skipped columns that say nothing about it, and its real verdict would hide among
them. So presentations show such cells under the parent's name and leave out the cells that
declined a node another cell judges. A declined cell is recognised from facts on the result,
never from its message: it Skipped, its ``variantAxes.gpuClass`` names one class and the
runner's ``gpuClass`` label another. A cell that skipped for a reason of its own (no driver)
has no such label, so it stays visible.
"""

from __future__ import annotations

from collections.abc import Iterable

from glimmer.api.pinned import PlanDocument
from glimmer.api.result import TestResult
from glimmer.contract.gpu_class import AXIS
from glimmer.contract.vocab import Phase


def judged_elsewhere(result: TestResult) -> bool:
    """The result is a gpuClass cell that declined a node another cell of its matrix judges."""
    cell = (result.variant_axes or {}).get(AXIS)
    home = (result.metrics or {}).get(AXIS)
    return result.phase is Phase.SKIPPED and bool(cell) and bool(home) and cell != home


def columns(plan: PlanDocument | None) -> dict[str, str]:
    """Planned test name -> the name it is presented under (its parent for gpuClass cells)."""
    if plan is None:
        return {}
    return {
        t.name: (t.parent if t.parent and AXIS in (t.axes or {}) else t.name) for t in plan.tests
    }


def presented(results: Iterable[TestResult]) -> list[TestResult]:
    """The results a per-unit presentation shows: all but the declined cells."""
    return [r for r in results if not judged_elsewhere(r)]
