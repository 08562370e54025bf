"""buildPlan (§2.4): every refusal at start in order, and the pinned document (scenarios 31–35)."""

from __future__ import annotations

from typing import Any

import pytest
from plan_builders import gate, profile, spec

from glimmer.api.test import BurnInTestSpec, HostPathMount, RunnerSpec, SoakSpec
from glimmer.api.threshold import Threshold
from glimmer.contract.vocab import Applicability, Comparison
from glimmer.plan.build import PlanRefused, build_plan
from glimmer.plan.resolve import plan_tests

TWO = ["n1", "n2"]


def _bad_gate(metric: str = "sustainedClockPct", value: str = "1") -> Threshold:
    # As a Go-built object (or one that bypassed the CRD) could carry it: no load-time check.
    return Threshold.model_construct(
        metric=metric,
        comparison=Comparison.GREATER_THAN_OR_EQUAL,
        value=value,
        applicability=Applicability.REQUIRED,
    )


def _build(
    *entries: dict[str, Any],
    tests: dict[str, BurnInTestSpec] | None = None,
    targets: list[str] | None = None,
    cap: int = 8,
    baseline: bool = False,
    **profile_fields: Any,
) -> Any:
    prof = profile(*entries, **profile_fields)
    planned = plan_tests(prof, tests or {})
    return build_plan(prof, planned, targets if targets is not None else TWO, cap, baseline)


def _refusal(*entries: dict[str, Any], **kwargs: Any) -> str:
    with pytest.raises(PlanRefused) as caught:
        _build(*entries, **kwargs)
    return caught.value.message


def _with_gates(kind: str, *gates: Threshold, **fields: Any) -> BurnInTestSpec:
    made = spec(kind, **fields)
    made.thresholds = list(gates)
    return made


# --- 1. malformed thresholds -------------------------------------------------------------


def test_malformed_gates_refuse_the_run_naming_every_one_across_tests() -> None:
    tests = {
        "a": _with_gates("clockprobe", _bad_gate(value="NaN")),
        "b": _with_gates("custom", _bad_gate(metric="Bad_Name")),
    }
    message = _refusal({"testRef": "a"}, {"testRef": "b"}, tests=tests)
    assert message.startswith("2 malformed thresholds")
    assert 'a: threshold 0 (sustainedClockPct, Malformed): value "NaN"' in message
    assert "b: threshold 0 (Bad_Name, Malformed)" in message


def test_more_than_five_malformed_gates_are_counted_after_the_fifth() -> None:
    tests = {"a": _with_gates("custom", *[_bad_gate(value="Inf")] * 7)}
    message = _refusal({"testRef": "a"}, tests=tests)
    assert message.startswith("7 malformed thresholds")
    assert "threshold 4 (" in message and "threshold 5 (" not in message
    assert message.endswith("; and 2 more")


def test_malformed_gates_are_refused_before_a_gated_baseline() -> None:
    tests = {"a": _with_gates("custom", _bad_gate(value="x"))}
    assert "malformed" in _refusal({"testRef": "a"}, tests=tests, baseline=True)


def test_an_unsound_gate_is_not_a_refusal() -> None:
    unsound = spec("clockprobe", thresholds=[gate("sustainedClockPct", "Equal", "83.22")])
    plan = _build({"inline": unsound.model_dump(by_alias=True)})
    assert plan.tests[0].spec.thresholds


# --- 2. gated baseline ---------------------------------------------------------------------


def test_gated_baseline_is_refused_naming_tests_with_their_gate_counts() -> None:
    tests = {f"t{i}": spec("custom", thresholds=[gate("a")] * (i + 1)) for i in range(7)} | {
        "free": spec("custom")
    }
    entries = [{"testRef": "free"}] + [{"testRef": f"t{i}"} for i in range(7)]
    message = _refusal(*entries, tests=tests, baseline=True)
    assert "7 planned tests have thresholds" in message
    assert "t0 (1 threshold), t1 (2 thresholds), t2 (3 thresholds)" in message
    assert "t4 (5 thresholds), and 2 more" in message
    assert "free" not in message


def test_baseline_without_gates_is_pinned_as_baseline() -> None:
    plan = _build({"inline": {"kind": "host-health"}}, baseline=True)
    assert plan.baseline is True


def test_an_empty_gate_overlay_makes_a_baseline_cell_ungated() -> None:
    entry = {
        "inline": {"kind": "custom", "thresholds": [gate("a")]},
        "variants": [{"name": "free", "thresholds": []}],
    }
    assert _build(entry, baseline=True).tests[0].spec.thresholds == []


# --- 3. variant axes -----------------------------------------------------------------------


def test_a_non_env_safe_axis_is_refused_first_in_sorted_order() -> None:
    entry = {
        "inline": {"kind": "custom"},
        "variants": [{"name": "c", "axes": {"z-axis": "1", "9lives": "2", "ok": "3"}}],
    }
    message = _refusal(entry)
    assert '"9lives"' in message and "z-axis" not in message
    assert 'variant "inline-0-custom-c"' in message


# --- 4. per test ---------------------------------------------------------------------------


def test_duplicate_planned_names_are_refused() -> None:
    tests = {"clock": spec()}
    message = _refusal({"testRef": "clock"}, {"testRef": "clock"}, tests=tests)
    assert message.startswith('two planned tests are named "clock"')


def test_duplicate_variant_cell_names_are_refused() -> None:
    entry = {"inline": {"kind": "custom"}, "variants": [{"name": "a"}, {"name": "a"}]}
    assert 'named "inline-0-custom-a"' in _refusal(entry)


PAIR = {"inline": {"kind": "ib-write-bw", "scope": "Pair"}}


@pytest.mark.parametrize(
    ("targets", "cap", "expected"),
    [
        (["n1"], 2, "needs exactly 2 targets (server, then client), but the run targets 1 node"),
        (["n1", "n2", "n3"], 4, "but the run targets 3 nodes"),
        (["n1", "n1"], 2, 'targets node "n1" twice'),
        (["n1", "n2"], 1, "maxConcurrentNodes is 1; set it to at least 2"),
    ],
)
def test_pair_topology_refusals_state_what_they_found(
    targets: list[str], cap: int, expected: str
) -> None:
    message = _refusal(PAIR, targets=targets, cap=cap)
    assert message.startswith('Pair test "inline-0-ib-write-bw"')
    assert expected in message


def test_a_pair_on_two_distinct_targets_with_cap_two_is_planned() -> None:
    assert _build(PAIR, cap=2).targets == TWO


def _group(kind: str = "nccl", **runner: Any) -> dict[str, Any]:
    inline: dict[str, Any] = {"kind": kind, "scope": "Group"}
    if runner:
        inline["runner"] = runner
    return {"inline": inline}


@pytest.mark.parametrize(
    ("targets", "cap", "expected"),
    [
        (["n1"], 4, "needs at least 2 targets (one rank per node), but the run targets 1 node"),
        (["n1", "n2", "n1"], 4, 'targets node "n1" more than once'),
        (["n1", "n2", "n3"], 2, "loads all 3 target nodes at once, but maxConcurrentNodes is 2"),
    ],
)
def test_group_topology_refusals_state_what_they_found(
    targets: list[str], cap: int, expected: str
) -> None:
    assert expected in _refusal(_group(), targets=targets, cap=cap)


def test_group_on_a_kind_whose_default_image_cannot_do_group_is_refused() -> None:
    message = _refusal(_group("ib-write-bw"))
    assert 'default image of kind "ib-write-bw"' in message and "only nccl" in message
    assert "default image" in _refusal(_group("my-own-runner"))


def test_an_explicit_image_bypasses_the_group_capability_check() -> None:
    plan = _build(_group("ib-write-bw", image="example.com/mpi-ib:1"))
    assert plan.tests[0].spec.runner is not None


def test_nccl_group_on_distinct_targets_within_cap_is_planned() -> None:
    assert len(_build(_group(), targets=["a", "b", "c"], cap=3).tests) == 1


def _mounted(*mounts: HostPathMount) -> BurnInTestSpec:
    made = spec("custom")
    made.runner = RunnerSpec.model_construct(host_paths=list(mounts), image=None, env=None)
    return made


def _mount(path: str, mount_path: str) -> HostPathMount:
    return HostPathMount.model_construct(path=path, mount_path=mount_path, read_only=True)


@pytest.mark.parametrize(
    ("mounts", "expected"),
    [
        ([_mount("", "/m")], "hostPaths[0].path is empty"),
        ([_mount("/p", "rel")], 'hostPaths[0].mountPath "rel" is not an absolute path'),
        ([_mount("/a", "/m"), _mount("/b", "/m")], 'hostPaths[1].mountPath "/m" is mounted twice'),
    ],
)
def test_host_path_refusals(mounts: list[HostPathMount], expected: str) -> None:
    message = _refusal({"testRef": "t"}, tests={"t": _mounted(*mounts)})
    assert message == f'test "t": {expected}'


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"kind": "compute-smoke", "durationSeconds": 900}, "is a burst"),
        ({"durationSeconds": 900, "segment": 299}, "segmentSeconds 299 is below the minimum 300"),
        ({"durationSeconds": 0}, "needs durationSeconds > 0"),
        ({"durationSeconds": 400, "segment": 600}, "longer than durationSeconds 400"),
        ({"durationSeconds": 900, "repeatCount": 2}, "repeatCount must be 1"),
    ],
)
def test_soak_refusals(fields: dict[str, Any], expected: str) -> None:
    fields = dict(fields)
    segment = fields.pop("segment", 300)
    made = spec(fields.pop("kind", "thermal-soak"), **fields)
    # Built as a Go-side object could be: the CRD's minimum of 300 not applied.
    made.soak = SoakSpec.model_construct(segment_seconds=segment, abort_early=False)
    message = _refusal({"testRef": "s"}, tests={"s": made})
    assert message.startswith('segmented soak "s" is refused: ')
    assert expected in message


def test_refusals_are_checked_test_by_test_in_plan_order() -> None:
    # The second test's Pair problem is found before the third test's duplicate name.
    tests = {"a": spec("custom"), "p": spec("ib-write-bw", scope="Pair")}
    message = _refusal({"testRef": "a"}, {"testRef": "p"}, {"testRef": "a"}, tests=tests, cap=1)
    assert message.startswith('Pair test "p"')


def test_an_unknown_scope_is_not_a_refusal() -> None:
    odd = spec("custom")
    object.__setattr__(odd, "scope", "Cluster")  # as an older or newer writer could store it
    plan = _build({"testRef": "odd"}, tests={"odd": odd}, targets=["n1"], cap=1)
    assert [t.name for t in plan.tests] == ["odd"]


# --- the pinned document -------------------------------------------------------------------


def test_the_plan_pins_targets_policy_entries_and_every_planned_test() -> None:
    entries: list[dict[str, Any]] = [
        {"testRef": "clock", "required": False},
        {
            "inline": {"kind": "nccl", "scope": "Pair"},
            "variants": [{"name": "big", "axes": {"size": "8G"}, "durationSeconds": 60}],
        },
    ]
    plan = _build(*entries, tests={"clock": spec()}, fail_fast=True, sinks=["hook"], cap=2)
    assert plan.version == 1 and plan.targets == TWO
    assert (plan.fail_fast, plan.baseline, plan.sinks) == (True, False, ["hook"])
    assert [e.entry_name(i) for i, e in enumerate(plan.profile_entries)] == [
        "clock",
        "inline-1-nccl",
    ]
    assert [
        (t.name, t.required, t.parent, t.axes, t.spec.duration_seconds) for t in plan.tests
    ] == [
        ("clock", False, None, None, 0),
        ("inline-1-nccl-big", True, "inline-1-nccl", {"size": "8G"}, 60),
    ]


def test_editing_a_test_after_pinning_changes_nothing_in_the_plan() -> None:
    clock = spec(thresholds=[gate("sustainedClockPct", value="80")], repeatCount=2)
    prof = profile({"testRef": "clock"})
    plan = build_plan(prof, plan_tests(prof, {"clock": clock}), TWO, 1, False)
    clock.repeat_count = 5
    assert clock.thresholds is not None
    clock.thresholds[0].value = "99"
    prof.spec.fail_fast = True
    pinned = plan.tests[0].spec
    assert pinned.repeat_count == 2 and pinned.thresholds is not None
    assert pinned.thresholds[0].value == "80" and plan.fail_fast is False
