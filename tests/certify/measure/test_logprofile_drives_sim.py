"""One nccl-bandwidth recipe: the shipped LogProfile is the §6.1 pattern the code carries, and
the simulated certification reads bandwidth through the LogProfile its catalog entry names."""

from __future__ import annotations

import pytest

import glimmer.certify.category.communication as sim_category_nccl
from glimmer.api.certify.logprofile import LogProfile
from glimmer.backends.sim.certify import certify
from glimmer.certify.catalog.entries import get_entry, log_profile, measurement_profile
from glimmer.certify.measure.bandwidth import NCCL_BANDWIDTH_PATTERN
from glimmer.certify.spec import from_text
from glimmer.errors import InputError
from glimmer.fleet.load import load_topology
from glimmer.sim.twin import FleetSim

# The in-place columns instead of the out-of-place ones: a recipe no built-in parser follows.
IN_PLACE = (
    r"^\s*(?P<size>\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+\S+"
    r"\s+[\d.]+\s+(?P<algBW>[\d.]+)\s+(?P<busBW>[\d.]+)"
)
CERT = """\
apiVersion: certify.glimmer.ai/v1alpha1
kind: Certification
metadata: {name: t}
spec:
  target: {nodeNames: [hgx-node-0001, hgx-node-0002]}
  categories:
    - {domain: communication, variant: nccl-all-reduce, options: {testScale: full-scale}}
"""


def test_the_shipped_nccl_profile_is_the_spec_pattern() -> None:
    pattern = log_profile("nccl-bandwidth").spec.patterns.bandwidth_result
    assert pattern is not None
    assert pattern.regex == NCCL_BANDWIDTH_PATTERN


def test_a_communication_category_names_the_profile_of_its_entry() -> None:
    entry = get_entry("communication", "nccl-all-reduce")
    assert measurement_profile(entry, "bandwidthMeasurement") == "nccl-bandwidth"
    (cat,) = from_text(CERT).categories
    assert cat.log_profile == "nccl-bandwidth"


def _with_regex(regex: str) -> LogProfile:
    base = log_profile("nccl-bandwidth")
    spec = base.spec.model_copy(deep=True)
    assert spec.patterns.bandwidth_result is not None
    spec.patterns.bandwidth_result.regex = regex
    spec.patterns.bandwidth_result.example = None
    return base.model_copy(update={"spec": spec})


def _bandwidth(monkeypatch: pytest.MonkeyPatch, regex: str) -> list[tuple[int, float]]:
    seen: list[str] = []

    def fake(name: str) -> LogProfile:
        seen.append(name)
        return _with_regex(regex)

    monkeypatch.setattr(sim_category_nccl, "log_profile", fake)
    twin = FleetSim(load_topology("ai-factory"), noise=False)
    result = certify(twin, from_text(CERT))
    assert seen == ["nccl-bandwidth"]
    return [(r.size, r.bus_bw) for r in result.categories[0].bandwidth]


def test_the_profile_drives_what_the_simulator_measures(monkeypatch: pytest.MonkeyPatch) -> None:
    out_of_place = _bandwidth(monkeypatch, NCCL_BANDWIDTH_PATTERN)
    in_place = _bandwidth(monkeypatch, IN_PLACE)
    assert out_of_place and in_place
    assert [s for s, _ in out_of_place] == [s for s, _ in in_place]
    assert out_of_place != in_place  # the recipe, not a code constant, picked the columns


def test_a_profile_that_reads_nothing_fails_the_group(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _bandwidth(monkeypatch, r"^(?P<size>\d+) never (?P<algBW>x)(?P<busBW>y)") == []


def test_a_profile_without_the_named_groups_is_an_input_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(InputError, match="named groups: size, algBW, busBW"):
        _bandwidth(monkeypatch, r"^\s*(?P<size>\d+)")
