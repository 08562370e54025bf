"""The conditions a pinned plan yields: ThresholdsSound and PlanExpanded (§1.4, §2.5)."""

from __future__ import annotations

from typing import Any

from plan_builders import T0, gate, profile, spec

from glimmer.api.pinned import PlanDocument
from glimmer.api.test import BurnInTestSpec
from glimmer.plan.build import build_plan
from glimmer.plan.resolve import plan_tests
from glimmer.plan.review import plan_expanded, thresholds_sound


def _plan(
    *entries: dict[str, Any],
    targets: list[str] | None = None,
    tests: dict[str, BurnInTestSpec] | None = None,
    **named: BurnInTestSpec,
) -> PlanDocument:
    prof = profile(*entries)
    known = {**(tests or {}), **named}
    return build_plan(prof, plan_tests(prof, known), targets or ["n1", "n2"], 8, False)


def test_sound_gates_are_reviewed_without_claiming_calibration() -> None:
    plan = _plan({"testRef": "c"}, c=spec(thresholds=[gate("sustainedClockPct", value="80")]))
    cond = thresholds_sound(plan, T0, 3)
    assert (cond.type, cond.status, cond.reason) == ("ThresholdsSound", "True", "Reviewed")
    assert "not whether their values are calibrated" in cond.message
    assert cond.observed_generation == 3 and cond.last_transition_time == T0


def test_unsound_gates_set_the_condition_false_naming_them() -> None:
    plan = _plan(
        {"testRef": "c"},
        {"testRef": "h"},
        c=spec(thresholds=[gate("sustainedClockPct", "Equal", "83.22")]),
        h=spec("clockprobe", thresholds=[gate("pdWedgeSuspected", "Equal", "0")]),
    )
    cond = thresholds_sound(plan, T0, None)
    assert (cond.status, cond.reason) == ("False", "UnsoundThresholds")
    assert "c: threshold 0 (sustainedClockPct, Unsound)" in cond.message
    assert "h: threshold 0 (pdWedgeSuspected, Unsound)" in cond.message


def test_an_unregistered_metric_on_a_built_in_kind_is_unsound() -> None:
    plan = _plan({"testRef": "c"}, c=spec(thresholds=[gate("sustainedClokPct")]))
    assert thresholds_sound(plan, T0, None).reason == "UnsoundThresholds"


def test_more_than_five_unsound_gates_are_counted_and_the_message_clamped_rune_safe() -> None:
    name = "тест-" + "é" * 200  # multi-byte characters right where the clamp falls
    gates = [gate("sustainedClockPct", "Equal", f"{i}.5") for i in range(8)]
    plan = _plan({"testRef": name}, tests={name: spec(thresholds=gates)})
    message = thresholds_sound(plan, T0, None).message
    assert len(message.encode()) <= 1024
    message.encode().decode()  # whole characters only
    assert message.startswith("8 unsound thresholds")


def test_at_most_five_gates_are_named_and_the_rest_counted() -> None:
    gates = [gate("busBandwidthGBs", value="1")] + [
        gate(f"m{i}x", "Equal", "1.5") for i in range(6)
    ]
    plan = _plan({"testRef": "c"}, c=spec("custom", thresholds=gates))
    message = thresholds_sound(plan, T0, None).message
    assert message.count(", Unsound)") == 5
    assert message.endswith("; and 1 more")


def test_long_reasons_name_fewer_gates_so_the_count_of_the_rest_survives() -> None:
    gates = [gate("sustainedClockPct", "Equal", f"{i}.5") for i in range(7)]
    plan = _plan({"testRef": "c"}, c=spec("custom", thresholds=gates))
    message = thresholds_sound(plan, T0, None).message
    named = message.count("(sustainedClockPct, Unsound)")
    assert 1 <= named < 5 and len(message.encode()) <= 1024
    assert message.endswith(f"; and {7 - named} more")


def test_plan_expanded_is_absent_without_variants() -> None:
    assert plan_expanded(_plan({"testRef": "c"}, c=spec()), 1, T0, None) is None


def test_plan_expanded_states_entries_executions_node_executions_and_cap() -> None:
    entries: list[dict[str, Any]] = [
        {"testRef": "c", "variants": [{"name": f"v{i}"} for i in range(4)]},
        {"inline": {"kind": "nccl", "scope": "Pair"}},
    ]
    plan = _plan(*entries, targets=["n1", "n2"], c=spec())
    cond = plan_expanded(plan, 2, T0, 7)
    assert cond is not None
    assert (cond.type, cond.status, cond.reason) == ("PlanExpanded", "True", "VariantsExpanded")
    # 4 Node cells x 2 targets + one Pair unit of 2 nodes.
    assert cond.message == (
        "2 profile entries expanded to 5 planned tests: 10 node executions over 2 target "
        "nodes, at most 2 at once (maxConcurrentNodes)"
    )


def test_a_node_named_twice_is_one_node_execution_per_node_test() -> None:
    entry = {"testRef": "c", "variants": [{"name": "a"}, {"name": "b"}]}
    plan = _plan(entry, targets=["n1", "n2", "n1"], c=spec())
    cond = plan_expanded(plan, 1, T0, None)
    assert cond is not None and "4 node executions over 2 target nodes" in cond.message
