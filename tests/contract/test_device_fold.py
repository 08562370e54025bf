"""fold_devices: the worst device's figure by the registry's direction, the first device's for
labels, bools, names about the whole execution and anything that is not a plain number."""

import numpy as np

from glimmer.contract.device_fold import fold_devices, numeric_fold


def test_numbers_fold_by_the_registry_direction() -> None:
    assert fold_devices("bandwidthGbps", [3.0, 1.0, 2.0]) == 1.0  # Min: a floor
    assert fold_devices("bandwidthStdDevGbps", [3.0, 5, 2.0]) == 5  # Max: a ceiling
    assert fold_devices("elapsedS", [1, 2.5, 3]) == 6.5  # Sum: a counter
    assert fold_devices("meanBandwidthGbps", [3.0, 1.0]) == 3.0  # Last: the first device's


def test_lifetime_counters_sum_and_error_ceilings_take_the_largest() -> None:
    assert fold_devices("eccErrors", [1, 0, 2]) == 3
    assert fold_devices("maxRelError", [1e-6, 3e-6, 2e-6]) == 3e-6
    assert fold_devices("unregisteredFigure", [4.0, 9.0]) == 4.0


def test_anything_but_plain_numbers_is_the_first_devices() -> None:
    assert fold_devices("bandwidthGbps", [3.0, "n/a", 1.0]) == 3.0
    assert fold_devices("eccErrors", [True, True]) is True  # a bool is a label, not a count
    assert fold_devices("bandwidthGbps", [2.0, None]) == 2.0
    assert fold_devices("bandwidthGbps", [3.0, 1.0], once={"bandwidthGbps"}) == 3.0


def test_number_subclasses_fold_as_numbers() -> None:
    # A float of a subclass (numpy's float64) is a number all the same; numpy's int64 is no
    # int, so a board printing one is the first device's.
    assert fold_devices("bandwidthGbps", [np.float64(3.0), 1.0, 2]) == 1.0
    assert fold_devices("bandwidthGbps", [3.0, 1.0, np.int64(2)]) == 3.0


def test_the_rule_is_the_names_alone() -> None:
    assert numeric_fold("bandwidthGbps") is min
    assert numeric_fold("eccErrors") is sum
    assert numeric_fold("maxRelError") is max
    assert numeric_fold("meanBandwidthGbps") is None
