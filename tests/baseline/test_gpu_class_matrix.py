"""A baseline runs a per-product (gpuClass) matrix as its parent test: its cells only choose the
gates that judge a node, a baseline has no gates, and derive splits samples by product itself."""

from __future__ import annotations

from baseline_world import acceptance

from glimmer.baseline.suite import planned_tests, thresholdless, without_gpu_class_matrices


def test_the_stripped_acceptance_profile_runs_memory_bandwidth_once() -> None:
    names = [p.name for p in planned_tests(thresholdless(acceptance()))]
    assert "memory-bandwidth" in names
    assert not [n for n in names if n.startswith("memory-bandwidth-")]


def test_collapsing_says_which_cells_it_folded() -> None:
    suite, notes = without_gpu_class_matrices(acceptance())
    assert notes == [
        "memory-bandwidth: its gpuClass cells (pcie-gen5, pcie-gen4, gb200-c2c, gb10-c2c) ran "
        "as the one test; the samples are split by GPU product instead"
    ]
    assert all(not e.variants for e in suite.profile.spec.tests)
    # The source profile is left as it was.
    assert any(e.variants for e in acceptance().profile.spec.tests)
