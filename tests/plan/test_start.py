"""start_run end to end at the plan level: scenarios 30, 33, 34, 35 and the built-in fallback."""

from __future__ import annotations

import random
from typing import Any

from plan_builders import T0, gate, later, node, profile, run, spec

from glimmer.api.pinned import PlanDocument, decode_plan
from glimmer.api.run import BurnInRunStatus
from glimmer.api.threshold import Threshold
from glimmer.contract.vocab import Applicability, Comparison
from glimmer.plan.builtin import builtin_tests, profile_or_builtin
from glimmer.plan.decision import Admitted, Refused
from glimmer.plan.env import runner_env
from glimmer.plan.start import start_run

NODES = [node("n1", pool="a"), node("n2", pool="a")]


def _start(prof: Any, tests: dict[str, Any] | None = None, **run_fields: Any) -> Any:
    run_fields.setdefault("nodes", ["n1", "n2"])
    return start_run(run(**run_fields), prof, tests or {}, NODES, [], later(30))


def test_unknown_test_ref_is_a_config_error_naming_the_missing_ref() -> None:
    decision = _start(profile({"testRef": "missing"}, sinks=["hook"]))
    assert isinstance(decision, Refused)
    assert decision.kind == "resolve" and decision.config_error
    assert '"missing"' in decision.message
    assert decision.sinks == ("hook",)  # the profile resolved: its sinks hear the Error
    result = decision.synthetic_result()
    assert (result.name, result.kind, result.scope, result.phase) == ("resolve", "", None, "Error")
    # The status write carrying it is valid (a synthetic result has no scope).
    status = BurnInRunStatus(phase="Error", results=[result])
    assert "scope" not in status.model_dump(by_alias=True, exclude_none=True)["results"][0]


def test_a_missing_profile_with_no_built_in_of_that_name_is_a_config_error() -> None:
    decision = _start(None, profile_ref="nope")
    assert isinstance(decision, Refused) and decision.config_error
    assert decision.message.startswith('BurnInProfile "nope" does not exist')
    assert decision.sinks == ()


def test_profile_ref_falls_back_to_a_built_in_profile() -> None:
    decision = _start(None, profile_ref="acceptance")
    assert isinstance(decision, Admitted)
    assert decision.plan.tests[0].name == "host-fault-counters"


def test_the_users_test_wins_over_a_built_in_of_the_same_name() -> None:
    mine = spec("host-health", durationSeconds=7)
    found = profile_or_builtin("acceptance", None, {"host-fault-counters": mine})
    assert found is not None
    assert found[1]["host-fault-counters"].duration_seconds == 7
    assert set(builtin_tests()) <= set(found[1])


def test_a_given_profile_wins_over_the_built_in_of_that_name() -> None:
    found = profile_or_builtin("acceptance", profile({"inline": {"kind": "custom"}}), {})
    assert found is not None and len(found[0].spec.tests) == 1


def test_targets_that_resolve_to_nothing_are_a_config_error() -> None:
    decision = _start(profile({"inline": {"kind": "custom"}}), nodes=None, selector={"x": "y"})
    assert isinstance(decision, Refused) and decision.config_error
    assert decision.message == "target nodeSelector x=y matches no nodes"


def test_a_build_refusal_is_a_config_error_that_keeps_the_admission_condition() -> None:
    decision = _start(profile({"inline": {"kind": "ib-write-bw", "scope": "Pair"}}), nodes=["n1"])
    assert isinstance(decision, Refused) and decision.kind == "resolve" and decision.config_error
    assert [c.reason for c in decision.conditions] == ["TargetsAvailable"]


def test_admission_is_decided_before_the_plan_is_built() -> None:
    holder = run("h", nodes=["n1"], started=T0, finalizer=True)
    broken = profile({"inline": {"kind": "ib-write-bw", "scope": "Pair"}})
    decision = start_run(run("t", nodes=["n1"], created=later(1)), broken, {}, NODES, [holder], T0)
    assert isinstance(decision, Refused) and decision.kind == "admission"


def test_gated_baseline_is_refused_and_an_ungated_one_pins_baseline() -> None:
    gated = profile({"testRef": "c"})
    refused = _start(gated, {"c": spec(thresholds=[gate("sustainedClockPct")])}, baseline=True)
    assert isinstance(refused, Refused)
    assert "c (1 threshold)" in refused.message
    admitted = _start(gated, {"c": spec()}, baseline=True)
    assert isinstance(admitted, Admitted) and admitted.plan.baseline is True


def test_variants_expand_into_cells_with_their_axes_env_and_plan_expanded() -> None:
    cells = [{"name": f"{p}", "axes": {"precision": p}} for p in ("fp8", "fp16", "bf16", "tf32")]
    entry = {"testRef": "gemm", "variants": cells}
    decision = _start(profile(entry), {"gemm": spec("gemm-sweep", thresholds=[])})
    assert isinstance(decision, Admitted)
    names = [t.name for t in decision.plan.tests]
    assert names == ["gemm-fp8", "gemm-fp16", "gemm-bf16", "gemm-tf32"]
    cell = decision.plan.tests[1]
    env = {v.name: v.value for v in runner_env(cell.spec, 1, cell.axes)}
    assert env["BURNIN_VARIANT_PRECISION"] == "fp16"
    assert decision.plan_expanded_condition is not None


def test_a_variant_env_overlay_on_a_test_without_runner_block_works() -> None:
    entry = {
        "testRef": "c",
        "variants": [{"name": "x", "env": [{"name": "K", "value": "1"}], "args": ["-v"]}],
    }
    decision = _start(profile(entry), {"c": spec()})
    assert isinstance(decision, Admitted)
    runner = decision.plan.tests[0].spec.runner
    assert runner is not None and runner.args == ["-v"]


def test_the_pinned_annotation_round_trips_and_ignores_later_edits() -> None:
    clock = spec(thresholds=[gate("sustainedClockPct", value="80")], repeatCount=3)
    decision = _start(profile({"testRef": "c"}), {"c": clock})
    assert isinstance(decision, Admitted)
    clock.repeat_count = 1
    pinned = decode_plan(decision.plan_annotation)
    assert pinned == decision.plan and pinned.tests[0].spec.repeat_count == 3


def test_an_oversize_plan_is_stored_compressed_and_round_trips() -> None:
    env = [{"name": f"V{i}", "value": "same-value " * 20} for i in range(800)]
    decision = _start(profile({"inline": {"kind": "custom", "runner": {"env": env}}}))
    assert isinstance(decision, Admitted)
    assert not decision.plan_annotation.startswith("{")
    assert decode_plan(decision.plan_annotation) == decision.plan


def test_a_plan_too_large_even_compressed_is_refused() -> None:
    noise = random.Random(7)
    env = [
        {"name": f"V{i}", "value": "".join(noise.choices("0123456789abcdef", k=1000))}
        for i in range(300)
    ]
    decision = _start(profile({"inline": {"kind": "custom", "runner": {"env": env}}}))
    assert isinstance(decision, Refused) and decision.config_error
    assert "annotation limit" in decision.message


def test_a_legacy_raw_json_plan_still_reads() -> None:
    legacy = '  {"version": 1, "targets": ["n1"], "profileEntries": [], "tests": []}'
    assert decode_plan(legacy) == PlanDocument(targets=["n1"], profile_entries=[], tests=[])


def test_thresholds_sound_is_decided_from_the_pinned_plan() -> None:
    odd = spec(thresholds=[gate("sustainedClockPct", "Equal", "83.22")])
    decision = _start(profile({"testRef": "c"}), {"c": odd})
    assert isinstance(decision, Admitted)
    assert decision.thresholds_sound_condition.reason == "UnsoundThresholds"


def test_a_malformed_gate_refuses_the_run_before_anything_is_touched() -> None:
    bad = spec()
    bad.thresholds = [
        Threshold.model_construct(
            metric=metric,
            comparison=Comparison.EQUAL,
            value=value,
            applicability=Applicability.REQUIRED,
        )
        for metric, value in (("eccErrors", "NaN"), ("Bad_Name", "0"))
    ]
    decision = _start(profile({"testRef": "c"}), {"c": bad})
    assert isinstance(decision, Refused) and decision.kind == "resolve" and decision.config_error
    assert decision.message.startswith("2 malformed thresholds")
    assert "(eccErrors, Malformed)" in decision.message
    assert "(Bad_Name, Malformed)" in decision.message


def test_a_given_profile_resolves_a_built_in_test_it_names() -> None:
    decision = _start(profile({"testRef": "host-fault-counters"}))
    assert isinstance(decision, Admitted)
    assert [t.name for t in decision.plan.tests] == ["host-fault-counters"]


def test_a_given_profiles_test_of_the_users_wins_over_the_built_in_of_that_name() -> None:
    mine = spec("host-health", durationSeconds=7)
    decision = _start(profile({"testRef": "host-fault-counters"}), {"host-fault-counters": mine})
    assert isinstance(decision, Admitted)
    assert decision.plan.tests[0].spec.duration_seconds == 7
