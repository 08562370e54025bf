import pytest

from glimmer.contract.kinds import BUILT_IN
from glimmer.contract.names import (
    UNIT_SUFFIXES,
    canonical_name,
    generic_canonical,
    is_valid_metric_name,
    unit_of,
    validate_metric_name,
)
from glimmer.contract.registry import METRICS, Unit


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("bandwidthGbps", Unit.GBPS),
        ("busBandwidthGBs", Unit.GBS),
        ("readBandwidthMBs", Unit.MBS),
        ("achievedTflops", Unit.TFLOPS),
        ("smClockMHz", Unit.MHZ),
        ("latencyUs", Unit.US),
        ("totalKernelMs", Unit.MS),
        ("sustainedClockPct", Unit.PCT),
        ("gpuTempC", Unit.C),
        ("powerDrawW", Unit.W),
        ("elapsedS", Unit.S),
        ("miscompares", Unit.NONE),
        ("messageRateMpps", Unit.NONE),
    ],
)
def test_unit_is_read_from_the_suffix(name: str, unit: Unit) -> None:
    assert unit_of(name) is unit


def test_longer_suffix_wins_over_a_shorter_one_it_ends_with() -> None:
    # "xGbps" would not end in "S", but a name ending in "GBs" must not read as "S" or "Bs".
    order = [u.value for u in UNIT_SUFFIXES]
    for i, longer in enumerate(order):
        for shorter in order[i + 1 :]:
            assert not shorter.endswith(longer), (longer, shorter)
    assert unit_of("copyGBs") is Unit.GBS
    assert unit_of("copyMBs") is Unit.MBS


@pytest.mark.parametrize("bare", ["Gbps", "GBs", "MBs", "Tflops", "MHz", "Us", "Ms", "Pct"])
def test_a_bare_suffix_carries_no_unit(bare: str) -> None:
    assert unit_of(bare) is Unit.NONE
    assert unit_of("C") is Unit.NONE
    assert unit_of("S") is Unit.NONE


def test_unit_of_works_on_unregistered_names() -> None:
    assert unit_of("myCustomLatencyUs") is Unit.US
    assert unit_of("h2dBandwidthGbs") is Unit.NONE  # the casing trap: Gbs is no unit


def test_every_registered_name_is_valid_and_its_suffix_matches_its_unit() -> None:
    for spec in METRICS:
        assert validate_metric_name(spec.name) is None, spec.name
        assert unit_of(spec.name) is spec.unit, spec.name


@pytest.mark.parametrize("name", ["a", "x9", "gpuTempC", "myVendorCounter", "aBC123"])
def test_well_formed_names_are_legal_even_unregistered(name: str) -> None:
    assert is_valid_metric_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "Busbw",
        "9lives",
        "max_rel_error",
        "peak-temp",
        "gpu.temp",
        "#x",
        "gpuTempé",
        "a b",
        "gpuTemp\n",
        "X",
    ],
)
def test_names_outside_the_grammar_are_rejected_with_a_reason(name: str) -> None:
    problem = validate_metric_name(name)
    assert problem is not None
    assert problem


def test_registered_name_with_a_wrong_unit_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    from glimmer.contract import registry

    row = registry.REGISTRY["gpuTempC"]
    monkeypatch.setitem(
        registry.REGISTRY,
        "gpuTempC",
        registry.MetricSpec("gpuTempC", Unit.W, row.use, row.aggregation, row.combination, ""),
    )
    problem = validate_metric_name("gpuTempC")
    assert problem is not None and "unit" in problem


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("max_rel_error", "maxRelError"),
        ("MAX_REL_ERROR", "maxRelError"),
        ("peak-temp-c", "peakTempC"),
        ("mixed_-sep", "mixedSep"),
        ("latency_p99_us", "latencyP99Us"),
        ("achievedTflops", "achievedTflops"),  # no separator: verbatim, case kept
        ("Busbw", "Busbw"),
        ("a__b", "aB"),
        ("_x", "X"),
    ],
)
def test_generic_conversion_splits_on_underscore_and_dash(raw: str, canonical: str) -> None:
    assert generic_canonical(raw) == canonical


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("h2d_bandwidth_gbs", "h2dBandwidthGbs"),
        ("sm_clock_mhz", "smClockMhz"),
        ("window_seconds", "windowSeconds"),
    ],
)
def test_casing_trap_generic_conversion_does_not_know_units(raw: str, canonical: str) -> None:
    assert generic_canonical(raw) == canonical
    assert unit_of(canonical) is Unit.NONE


def test_kind_alias_is_applied_before_the_generic_conversion() -> None:
    assert canonical_name("memory-bw", "h2d_bandwidth_gbs") == "hostToDeviceBandwidthGBs"
    assert canonical_name("clockprobe", "sm_clock_mhz") == "smClockMHz"
    assert canonical_name("gemm-sweep", "window_seconds") == "sampleWindowS"
    assert canonical_name("nccl", "busbw") == "busBandwidthGBs"


def test_alias_matches_the_exact_raw_key_only() -> None:
    assert canonical_name("nccl", "BUSBW") == "BUSBW"
    assert canonical_name("nccl", "bus_bw") == "busBw"


def test_aliases_belong_to_their_kind_only() -> None:
    assert canonical_name("gpu-burn", "busbw") == "busbw"
    assert canonical_name("custom", "busbw") == "busbw"
    assert canonical_name("somebody-elses-runner", "tflops") == "tflops"
    assert canonical_name("compute-smoke", "tflops") == "throughputTflops"
    assert canonical_name("gpu-burn", "tflops") == "sustainedThroughputTflops"


def test_compute_smoke_max_rel_error_stays_unregistered() -> None:
    # Deliberately not aliased (a known discrepancy): its error figure is not maxRelativeError.
    assert canonical_name("compute-smoke", "max_rel_error") == "maxRelError"


def test_no_alias_is_a_respelling_the_generic_conversion_already_produces() -> None:
    for kind in BUILT_IN.values():
        for raw, target in kind.aliases.items():
            assert generic_canonical(raw) != target, f"{kind.name}: {raw} -> {target}"


def test_within_one_kind_no_two_raw_keys_share_a_canonical_name() -> None:
    for kind in BUILT_IN.values():
        targets = list(kind.aliases.values())
        assert len(targets) == len(set(targets)), kind.name
