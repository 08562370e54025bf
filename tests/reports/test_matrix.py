"""A gpuClass matrix is presented as its parent: the cells that declined a node another cell
judges are left out, recognised from the result's facts, never from its message."""

from __future__ import annotations

from glimmer.api.result import TestResult
from glimmer.contract.vocab import Phase
from glimmer.reports.matrix import judged_elsewhere, presented


def _cell(cell: str, phase: Phase, home: str | None) -> TestResult:
    return TestResult(
        name=f"memory-bandwidth-{cell}",
        kind="memory-bw",
        phase=phase,
        nodes=["n0"],
        variant_axes={"gpuClass": cell},
        metrics={"gpuClass": home} if home else None,
        message="MEMORY_BW_SKIP: anything at all",
    )


def test_a_cell_that_declined_a_node_of_another_class_is_left_out() -> None:
    own = _cell("pcie-gen5", Phase.PASSED, "pcie-gen5")
    other = _cell("pcie-gen4", Phase.SKIPPED, "pcie-gen5")
    assert judged_elsewhere(other) and not judged_elsewhere(own)
    assert presented([own, other]) == [own]


def test_a_cell_that_skipped_for_its_own_reason_stays_visible() -> None:
    # No driver: the runner skipped before it could place the node in a class.
    no_driver = _cell("pcie-gen5", Phase.SKIPPED, None)
    # Its own class's cell skipping is never "judged elsewhere".
    own_skip = _cell("pcie-gen5", Phase.SKIPPED, "pcie-gen5")
    assert presented([no_driver, own_skip]) == [no_driver, own_skip]


def test_a_failed_or_errored_cell_is_never_left_out() -> None:
    # Only a Skip declines; anything else a cell says about a node is shown.
    for phase in (Phase.FAILED, Phase.ERROR, Phase.PASSED):
        assert not judged_elsewhere(_cell("pcie-gen4", phase, "pcie-gen5"))


def test_a_result_outside_any_matrix_is_untouched() -> None:
    plain = TestResult(name="gpu-stress", kind="gpu-burn", phase=Phase.SKIPPED, nodes=["n0"])
    assert presented([plain]) == [plain]
