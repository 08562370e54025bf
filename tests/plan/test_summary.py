from glimmer.api.profile import BurnInProfile
from glimmer.api.test import BurnInTest, BurnInTestSpec
from glimmer.plan.builtin import builtin_profile_names, load_builtin
from glimmer.plan.summary import summarize_profile, unit_seconds


def _builtin() -> tuple[dict[str, BurnInProfile], dict[str, BurnInTestSpec]]:
    loaded = load_builtin()
    profiles = {i.name: i.obj for i in loaded if isinstance(i.obj, BurnInProfile)}
    tests = {i.name: i.obj.spec for i in loaded if isinstance(i.obj, BurnInTest)}
    return profiles, tests


def test_the_five_builtin_profiles_exist() -> None:
    # host (issue 13): the vendor-free checks of one machine, for --backend local.
    names = ["acceptance", "host", "pair-network", "smoke", "soak"]
    assert sorted(builtin_profile_names()) == names


def test_soak_summary_counts_segments_from_duration_and_segment_length() -> None:
    profiles, tests = _builtin()
    [line] = summarize_profile(profiles["soak"], tests)
    assert (line.kind, line.duration_seconds, line.segments) == ("thermal-soak", 14400, 16)


def test_pair_network_is_all_pair_scope() -> None:
    profiles, tests = _builtin()
    assert {line.scope for line in summarize_profile(profiles["pair-network"], tests)} == {"Pair"}


def test_unit_budget_sums_durations_times_repeats() -> None:
    profiles, tests = _builtin()
    lines = summarize_profile(profiles["smoke"], tests)
    assert unit_seconds(lines) == 30 + 30 + 120
