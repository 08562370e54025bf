"""Fault windows and intensity combination (specs/fleet.md §4.2, §4.4), as properties."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from glimmer.sim.faults import Fault, Window, capture, combine, effective_intensity

times = st.floats(min_value=-1e9, max_value=1e10, allow_nan=False)
levels = st.floats(allow_nan=True, allow_infinity=True)
finite_levels = st.floats(min_value=0.0, max_value=5.0, allow_nan=False)


@given(times, times, times)
def test_a_window_is_half_open(a: float, b: float, t: float) -> None:
    lo, hi = min(a, b), max(a, b)
    w = Window(lo, hi)
    assert w.contains(t) == (lo <= t < hi)
    if lo < hi:
        assert w.contains(lo)
    assert not w.contains(hi)


@given(times)
def test_an_unbounded_window_always_contains(t: float) -> None:
    assert Window().contains(t)
    assert Window(start=t).contains(t)
    assert not Window(end=t).contains(t)


@given(times, times, times)
def test_back_to_back_windows_never_overlap(a: float, b: float, t: float) -> None:
    lo, mid = min(a, b), max(a, b)
    first, second = Window(lo, mid), Window(mid, mid + 60)
    assert not (first.contains(t) and second.contains(t))


@given(levels)
def test_effective_intensity_is_in_zero_one(value: float) -> None:
    level = effective_intensity(value)
    assert 0.0 <= level <= 1.0
    if not math.isfinite(value) or value <= 0:
        assert level == 0.0
    else:
        assert level == min(1.0, value)


@given(st.lists(finite_levels, max_size=8))
def test_overlaps_combine_by_maximum_never_by_sum(values: list[float]) -> None:
    combined = combine(values)
    assert combined == max((min(1.0, v) for v in values if v > 0), default=0.0)
    assert combined <= 1.0


@given(st.lists(finite_levels, min_size=1, max_size=8), st.permutations(range(8)))
def test_combination_ignores_order(values: list[float], perm: list[int]) -> None:
    shuffled = [values[i] for i in perm if i < len(values)]
    assert combine(values) == combine(shuffled)


@given(
    st.lists(
        st.tuples(finite_levels, st.one_of(st.none(), times), st.one_of(st.none(), times)),
        max_size=6,
    ),
    times,
)
def test_capture_keeps_one_fault_per_pair_at_the_max_of_active_ones(
    specs: list[tuple[float, float | None, float | None]], t: float
) -> None:
    faults = [Fault("gpu_xid_burst", "node:n-0000", i, Window(s, e)) for i, s, e in specs]
    captured = capture(faults, t)
    active = [f.intensity for f in faults if f.window.contains(t) and f.intensity > 0]
    if not active:
        assert captured == ()
    else:
        assert len(captured) == 1
        assert captured[0].intensity == min(1.0, max(active))
        assert 0.0 < captured[0].intensity <= 1.0


@given(st.lists(st.sampled_from(["gpu_xid_burst", "gpu_low_pstate", "nope"]), max_size=6))
def test_capture_is_sorted_and_skips_unmodelled_modes(modes: list[str]) -> None:
    faults = [Fault(m, f"gpu:h-0000/{i}") for i, m in enumerate(modes)]
    captured = capture(faults, 0.0)
    assert list(captured) == sorted(captured)
    assert all(c.mode != "nope" for c in captured)


def test_overlapping_burst_edges_sum_to_72_not_81() -> None:
    """§4.4: a domain burst 0.5 and a GPU burst 0.5 on HGX: 144 edges × 0.5 = 72."""
    import numpy as np

    from glimmer.sim.levels import fold

    class Reach:
        def gpus(self, mode: str, target: str) -> np.ndarray:
            return np.arange(8) if target.startswith("domain:") else np.array([0])

        def racks(self, target: str) -> np.ndarray:
            return np.zeros(0, dtype=np.int64)

        def edges(self, target: str) -> np.ndarray:
            return np.arange(144) if target.startswith("domain:") else np.arange(18)

        def nics(self, target: str) -> np.ndarray:
            return np.zeros(0, dtype=np.int64)

    faults = capture(
        [
            Fault("gpu_nvlink_error_burst", "domain:s/r/hgx/h/baseboard", 0.5),
            Fault("gpu_nvlink_error_burst", "gpu:h/0", 0.5),
        ],
        0.0,
    )
    levels = fold(faults, Reach(), n_gpus=8, n_racks=1, n_edges=144, n_nics=0)
    assert levels.edge_burst().sum() == 72.0


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["gpu_low_pstate", "gpu_xid_burst"]),
            st.integers(0, 5),
            st.sets(st.integers(0, 9), min_size=1, max_size=10),
            finite_levels,
        ),
        max_size=8,
    )
)
def test_folding_keeps_the_maximum_per_gpu_and_mode(
    specs: list[tuple[str, int, set[int], float]],
) -> None:
    """Folding agrees with a brute-force maximum over every fault reaching each GPU."""
    import numpy as np

    from glimmer.sim.levels import fold

    reach_of = {}
    faults = []
    for mode, target_no, gpus, level in specs:
        target = f"node:n-{target_no}"
        reach_of.setdefault(target, gpus)  # one target always reaches the same GPUs
        faults.append(Fault(mode, target, level))

    class Reach:
        def gpus(self, mode: str, target: str) -> np.ndarray:
            return np.array(sorted(reach_of[target]), dtype=np.int64)

        def racks(self, target: str) -> np.ndarray:
            return np.zeros(0, dtype=np.int64)

        def edges(self, target: str) -> np.ndarray:
            return np.zeros(0, dtype=np.int64)

        def nics(self, target: str) -> np.ndarray:
            return np.zeros(0, dtype=np.int64)

    levels = fold(capture(faults, 0.0), Reach(), n_gpus=10, n_racks=0, n_edges=0, n_nics=0)
    for mode in ("gpu_low_pstate", "gpu_xid_burst"):
        for g in range(10):
            expected = combine(
                f.intensity for f in faults if f.mode == mode and g in reach_of[f.target]
            )
            assert levels.of(mode)[g] == expected
