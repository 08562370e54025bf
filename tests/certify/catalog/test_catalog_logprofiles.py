"""The built-in LogProfiles: each loads (its examples match its regexes), and every profile a
catalog entry's measurement names is one of them."""

from __future__ import annotations

import re

import glimmer.api.certify.kinds  # noqa: F401  (registers the kinds)
from glimmer.api.certify.logprofile import LogProfile
from glimmer.api.load import load_text
from glimmer.certify.catalog.entries import list_entries, log_profiles


def _profiles() -> dict[str, LogProfile]:
    found: dict[str, LogProfile] = {}
    for path in log_profiles():
        (item,) = load_text(path.read_text(encoding="utf-8"), path.name)
        assert isinstance(item.obj, LogProfile)
        found[item.name] = item.obj
    return found


def test_every_built_in_log_profile_loads() -> None:
    assert set(_profiles()) == {"nccl-bandwidth", "megatron-training"}


def test_every_measurement_of_the_catalog_names_a_built_in_profile() -> None:
    profiles = _profiles()
    for entry in list_entries():
        spec = entry.data["jobTemplate"]["spec"]
        for key in ("bandwidthMeasurement", "goodputMeasurement"):
            if key in spec:
                assert spec[key]["logProfileRef"] in profiles, entry.ref


def test_the_nccl_profile_reads_bus_bandwidth_from_a_result_row() -> None:
    pattern = _profiles()["nccl-bandwidth"].spec.patterns.bandwidth_result
    assert pattern is not None
    row = "  17179869184    4294967296     float     sum      -1   36501   470.68   882.51      0"
    m = re.search(pattern.regex, row + "   36433   471.55   884.16      0")
    assert m is not None
    assert (m["size"], m["algBW"], m["busBW"]) == ("17179869184", "470.68", "882.51")
