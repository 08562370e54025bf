"""Scenarios 13–36 of specs/burnin.md §11.2 on the simulator backend: run outcome, repeats and
retries, identity, admission, the cap and cordons, and the plan as the engine applies it.
Pods are executions; node annotations are the simulator's node stamps."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from engine_world import (
    GATE_MISCOMPARES,
    Recorder,
    ScriptedRunner,
    reply,
    run_object,
    spec_of,
    world,
)
from pydantic import ValidationError

from glimmer.api.test import BurnInTestSpec
from glimmer.contract.vocab import Phase
from glimmer.engine.keys import (
    CORDON_OWNER,
    FINALIZER,
    HEAT_EXPECTED,
    PRIOR_UNSCHEDULABLE,
)

GATED = spec_of("gpu-burn", thresholds=[GATE_MISCOMPARES])
OK = "miscompares=0\nburn finished"
BAD = "miscompares=3\nburn finished"


def results(w: Any, name: str = "run") -> dict[tuple[str, str], Any]:
    run = w.run(name)
    return {(r.name, (r.nodes or [""])[0]): r for r in run.status.results or ()}


# -- run outcome -------------------------------------------------------------------------------


def test_13_required_failed_beats_required_error() -> None:
    runner = ScriptedRunner(default=OK).on(reply(BAD), test="a").on(reply("boom", 3), test="b")
    w = world(1, {"a": GATED, "b": GATED}, [{"testRef": "a"}, {"testRef": "b"}], runner=runner)
    w.submit(run_object(targets=["node-000"]))
    assert w.drive().run.status.phase is Phase.FAILED


def test_13_required_error_with_others_passed_is_error() -> None:
    runner = ScriptedRunner(default=OK).on(reply("boom", 3), test="b")
    w = world(1, {"a": GATED, "b": GATED}, [{"testRef": "a"}, {"testRef": "b"}], runner=runner)
    w.submit(run_object(targets=["node-000"]))
    assert w.drive().run.status.phase is Phase.ERROR


def test_13_optional_failure_leaves_run_passed_but_counted() -> None:
    runner = ScriptedRunner(default=OK).on(reply(BAD), test="b")
    entries = [{"testRef": "a"}, {"testRef": "b", "required": False}]
    w = world(1, {"a": GATED, "b": GATED}, entries, runner=runner)
    w.submit(run_object(targets=["node-000"]))
    status = w.drive().run.status
    assert status.phase is Phase.PASSED
    assert (status.passed, status.failed) == (1, 1)


def test_14_fail_fast_stops_later_tests_and_errors_in_flight_units() -> None:
    runner = ScriptedRunner(default=OK).on(reply(BAD), test="a", node="node-000")
    w = world(
        3,
        {"a": GATED, "b": GATED},
        [{"testRef": "a"}, {"testRef": "b"}],
        runner=runner,
        failFast=True,
    )
    # node-000 fails fast (burst-like short run); the other two are still running.
    w.backend.faults = ()
    w.submit(run_object(targets=["node-000", "node-001", "node-002"], maxConcurrentNodes=3))
    status = w.drive().run.status
    names = {r.name for r in status.results}
    assert names == {"a"}  # test b never got a result
    assert status.phase is Phase.FAILED
    assert not [e for e in w.backend.executions("default", "run", w.run().metadata.uid).live()]


def test_15_unknown_scope_is_refused_by_the_model() -> None:
    with pytest.raises(ValidationError):
        BurnInTestSpec.model_validate({"kind": "gpu-burn", "scope": "Rack"})


# -- repeats, retries, identity -------------------------------------------------------------------


def test_16_three_repeats_each_must_pass() -> None:
    w = world(
        1,
        {"a": spec_of(repeatCount=3, thresholds=[GATE_MISCOMPARES])},
        [{"testRef": "a"}],
        runner=ScriptedRunner(default=OK),
    )
    w.submit(run_object(targets=["node-000"]))
    result = results(w.drive() and w)[("a", "node-000")]
    assert result.phase is Phase.PASSED
    assert [a.trigger for a in result.attempts] == ["Initial", "Repeat", "Repeat"]
    assert result.repeats_completed == 3


def test_16_failure_on_attempt_two_settles_failed_without_attempt_three() -> None:
    runner = ScriptedRunner(default=OK).on(reply(BAD), attempt=2)
    w = world(
        1,
        {"a": spec_of(repeatCount=3, thresholds=[GATE_MISCOMPARES])},
        [{"testRef": "a"}],
        runner=runner,
    )
    w.submit(run_object(targets=["node-000"], retryOnErrorLimit=2))
    w.drive()
    result = results(w)[("a", "node-000")]
    assert result.phase is Phase.FAILED
    assert [a.attempt for a in result.attempts] == [1, 2]


def test_17_error_retry_does_not_consume_a_repeat_and_clears_violations() -> None:
    runner = ScriptedRunner(default=OK).on(reply("crashed", 3), attempt=1)
    w = world(1, {"a": GATED}, [{"testRef": "a"}], runner=runner)
    w.submit(run_object(targets=["node-000"], retryOnErrorLimit=1))
    w.drive()
    result = results(w)[("a", "node-000")]
    assert result.phase is Phase.PASSED
    assert [a.trigger for a in result.attempts] == ["Initial", "ErrorRetry"]
    assert (result.error_retries, result.repeats_completed) == (1, 1)
    assert not result.violations


def test_18_execution_names_carry_the_attempt_and_the_run_uid() -> None:
    runner = ScriptedRunner(default=OK).on(reply("crashed", 3), attempt=1)
    w = world(1, {"a": GATED}, [{"testRef": "a"}], runner=runner)
    first = w.submit(run_object(targets=["node-000"], retryOnErrorLimit=1))
    w.drive()
    pods = [a.pod_name for a in results(w)[("a", "node-000")].attempts]
    assert "-a1-" in pods[0] and "-a2-" in pods[1]
    # A recreated run of the same name (new uid) never adopts the old executions.
    w.backend.delete_run("default", "run")
    w.backend.advance_to(w.backend.t + 1)
    assert w.backend.get_run("default", "run") is None
    second = w.submit(run_object(targets=["node-000"], retryOnErrorLimit=1))
    assert second.metadata.uid != first.metadata.uid
    w.drive()
    new_pods = [a.pod_name for a in results(w)[("a", "node-000")].attempts]
    assert not set(new_pods) & set(pods)


def test_19_a_pass_over_unchanged_state_does_nothing() -> None:
    w = world(
        2, {"a": GATED}, [{"testRef": "a"}], backend_cls=Recorder, runner=ScriptedRunner(default=OK)
    )
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=2))
    for _ in range(4):
        w.pass_()
    backend: Recorder = w.backend  # type: ignore[assignment]
    backend.advance_to(backend.t + 30)  # executions started
    w.pass_()
    before = len(backend.log)
    w.pass_()
    w.pass_()
    assert backend.log[before:] == []


# -- admission, cap, cordons ---------------------------------------------------------------------


def test_20_overlapping_run_is_refused_targets_busy() -> None:
    w = world(3, {"a": GATED}, [{"testRef": "a"}], runner=ScriptedRunner(default=OK))
    w.submit(run_object("first", targets=["node-000", "node-001"], maxConcurrentNodes=2))
    w.engine.reconcile("default", "first")
    w.engine.reconcile("default", "first")
    w.submit(run_object("second", targets=["node-001"]))
    w.engine.reconcile("default", "second")
    second = w.run("second")
    assert second.status.phase is Phase.ERROR
    [admitted] = [c for c in second.status.conditions if c.type == "Admitted"]
    assert (admitted.status, admitted.reason) == ("False", "TargetsBusy")
    [synthetic] = second.status.results
    assert synthetic.name == "admission" and synthetic.kind == "" and synthetic.scope is None
    assert "default/first" in (synthetic.message or "")
    assert FINALIZER not in (second.metadata.finalizers or ())
    # A disjoint run admits beside it.
    w.submit(run_object("third", targets=["node-002"]))
    w.engine.reconcile("default", "third")
    assert w.run("third").status.phase is Phase.RUNNING


def test_20_a_terminal_run_without_finalizer_does_not_block() -> None:
    w = world(1, {"a": GATED}, [{"testRef": "a"}], runner=ScriptedRunner(default=OK))
    w.submit(run_object("first", targets=["node-000"]))
    assert w.drive("first").run.status.phase is Phase.PASSED
    w.submit(run_object("second", targets=["node-000"]))
    assert w.drive("second").run.status.phase is Phase.PASSED


def test_21_two_runs_at_the_same_instant_exactly_one_admits() -> None:
    w = world(1, {"a": GATED}, [{"testRef": "a"}], runner=ScriptedRunner(default=OK))
    a = w.submit(run_object("run-a", targets=["node-000"]))
    b = w.submit(run_object("run-b", targets=["node-000"]))
    w.engine.reconcile("default", "run-b")
    w.engine.reconcile("default", "run-a")
    phases = {r: w.run(r).status.phase for r in ("run-a", "run-b")}
    winner = min((a, b), key=lambda r: r.metadata.uid).name
    assert phases[winner] is Phase.RUNNING
    assert [p for p in phases.values()].count(Phase.ERROR) == 1


def test_22_forced_run_never_takes_or_releases_another_runs_stamp() -> None:
    w = world(1, {"a": GATED}, [{"testRef": "a"}], runner=ScriptedRunner(default=OK))
    w.submit(run_object("first", targets=["node-000"]))
    for _ in range(3):
        w.engine.reconcile("default", "first")
    stamp = w.backend.nodes["node-000"].annotations[CORDON_OWNER]
    w.submit(run_object("forced", targets=["node-000"], force=True))
    w.engine.reconcile("default", "forced")
    forced = w.run("forced")
    [admitted] = [c for c in forced.status.conditions if c.type == "Admitted"]
    assert admitted.reason == "AdmittedByForce"
    assert forced.status.prior_unschedulable == {"node-000": False}
    w.drive("forced")
    assert w.backend.nodes["node-000"].annotations[CORDON_OWNER] == stamp
    assert w.backend.nodes["node-000"].unschedulable


def test_23_default_cap_keeps_one_node_under_load_and_a_lowered_cap_applies() -> None:
    w = world(6, {"a": GATED}, [{"testRef": "a"}], runner=ScriptedRunner(default=OK))
    w.submit(run_object(targets=[f"node-00{i}" for i in range(6)], maxConcurrentNodes=2))
    seen: list[tuple[bool, int, int]] = []

    def watch(run: Any, backend: Any) -> None:
        live = {e.node for e in backend.executions("default", "run", run.metadata.uid).live()}
        cordoned = {n for n, v in backend.nodes.items() if v.annotations.get(CORDON_OWNER)}
        lowered = run.spec.max_concurrent_nodes == 1
        seen.append((lowered, len(live), len(cordoned)))
        if run.status and run.status.passed >= 1 and not lowered:
            spec = run.spec.model_copy(update={"max_concurrent_nodes": 1})
            backend.runs[("default", "run")] = run.model_copy(update={"spec": spec})

    w.drive(progress=watch)
    assert max(live for _, live, _ in seen) == 2
    after = [(live, cordons) for lowered, live, cordons in seen if lowered]
    settle = next(i for i, (live, _) in enumerate(after) if live <= 1)
    assert all(live <= 1 and cordons <= 1 for live, cordons in after[settle + 1 :])
    assert w.run().status.phase is Phase.PASSED


def test_23_cap_one_never_holds_two_nodes() -> None:
    w = world(3, {"a": GATED}, [{"testRef": "a"}], runner=ScriptedRunner(default=OK))
    w.submit(run_object(targets=["node-000", "node-001", "node-002"]))
    worst = [0, 0]

    def watch(run: Any, backend: Any) -> None:
        live = backend.executions("default", "run", run.metadata.uid).live()
        cordoned = [n for n, v in backend.nodes.items() if v.annotations.get(CORDON_OWNER)]
        worst[0] = max(worst[0], len(live))
        worst[1] = max(worst[1], len(cordoned))

    w.drive(progress=watch)
    assert worst == [1, 1]


def test_24_stamp_before_cordon_and_start_state_restored() -> None:
    w = world(
        2, {"a": GATED}, [{"testRef": "a"}], backend_cls=Recorder, runner=ScriptedRunner(default=OK)
    )
    w.backend.update_node("node-001", unschedulable=True)  # an admin's cordon, found at start
    w.submit(run_object(targets=["node-000", "node-001"]))
    w.drive()
    node_log = [v for k, v in w.backend.log if k == "node" and "node-000" in v]
    assert CORDON_OWNER in node_log[0] and "'unschedulable'" not in node_log[0]
    assert "'unschedulable': True" in node_log[1]
    assert not w.backend.nodes["node-000"].unschedulable
    assert w.backend.nodes["node-001"].unschedulable  # left as found
    assert all(CORDON_OWNER not in n.annotations for n in w.backend.nodes.values())


def test_25_admin_cordon_after_start_is_undone_and_foreign_stamp_untouched() -> None:
    w = world(2, {"a": GATED}, [{"testRef": "a"}], runner=ScriptedRunner(default=OK))
    w.backend.update_node(
        "node-001", annotations={CORDON_OWNER: "other/run/uid-x", PRIOR_UNSCHEDULABLE: "false"}
    )
    w.submit(run_object(targets=["node-000", "node-001"]))
    w.pass_()
    w.pass_()
    w.backend.update_node("node-000", unschedulable=True)  # admin, after the run started
    w.drive()
    assert not w.backend.nodes["node-000"].unschedulable
    foreign = w.backend.nodes["node-001"]
    assert foreign.annotations[CORDON_OWNER] == "other/run/uid-x" and not foreign.unschedulable


def test_26_deleting_a_running_run_stops_load_then_releases_then_drops_finalizer() -> None:
    w = world(
        1, {"a": GATED}, [{"testRef": "a"}], backend_cls=Recorder, runner=ScriptedRunner(default=OK)
    )
    w.submit(run_object(targets=["node-000"]))
    for _ in range(3):
        w.pass_()
    w.backend.delete_run("default", "run")
    assert w.run().metadata.deletion_timestamp is not None
    w.backend.log.clear()
    w.pass_()
    kinds = w.backend.kinds()
    assert kinds.index("delete") < kinds.index("node") < kinds.index("metadata")
    assert w.backend.get_run("default", "run") is None
    assert not w.backend.nodes["node-000"].unschedulable


def test_28_execution_spec_carries_the_neutral_request() -> None:
    # The Pod these requests become (restartPolicy, hostname selector, cordon toleration,
    # never-evict annotation, volume names) is tests/backends/kubernetes/test_podspec.py's.
    mounts = {
        "runner": {
            "hostPaths": [
                {"path": "/dev/infiniband", "mountPath": "/dev/infiniband", "readOnly": False},
                {"path": "/dev/kmsg", "mountPath": "/dev/kmsg"},
            ]
        }
    }
    w = world(
        2,
        {"a": GATED, "m": spec_of(**mounts)},
        [{"testRef": "a"}, {"testRef": "m"}],
        runner=ScriptedRunner(default=OK),
    )
    w.submit(run_object(targets=["node-000"]))
    w.drive()
    specs = [e.spec for e in w.backend.executions("default", "run", w.run().metadata.uid)]
    plain = next(s for s in specs if s.test == "a")
    assert plain.node == "node-000" and plain.seat is None
    assert plain.mounts == ()
    mounted = next(s for s in specs if s.test == "m")
    assert [m.read_only for m in mounted.mounts] == [False, True]
    assert [m.host_path for m in mounted.mounts] == ["/dev/infiniband", "/dev/kmsg"]


def test_29_heat_declared_for_sustained_load_and_withdrawn_for_passive_tests() -> None:
    tests = {"burn": GATED, "health": spec_of("host-health")}
    heat: list[str | None] = []

    def watch(run: Any, backend: Any) -> None:
        heat.append(backend.nodes["node-000"].annotations.get(HEAT_EXPECTED))

    w = world(
        1, tests, [{"testRef": "burn"}, {"testRef": "health"}], runner=ScriptedRunner(default=OK)
    )
    w.backend.update_node("node-000", annotations={})
    w.submit(run_object(targets=["node-000"]))
    w.drive(progress=watch)
    owned = [h for h in heat if h]
    assert owned and owned[0].startswith("default/run/")
    assert heat[-1] is None


# -- plan and refusals -------------------------------------------------------------------------


def test_30_unknown_test_ref_waits_out_the_grace_then_errors() -> None:
    w = world(1, {}, [{"testRef": "missing"}])
    w.submit(run_object(targets=["node-000"]))
    assert w.pass_() == 15.0
    assert w.run().status is None or w.run().status.phase is Phase.PENDING
    w.backend.advance_to(w.backend.t + 121)
    w.pass_()
    status = w.run().status
    assert status.phase is Phase.ERROR
    [resolve] = status.results
    assert resolve.name == "resolve" and "missing" in (resolve.message or "")


def test_31_unsound_gate_sets_condition_and_run_proceeds() -> None:
    unsound = spec_of(
        "clockprobe",
        thresholds=[{"metric": "sustainedClockPct", "comparison": "Equal", "value": "83.22"}],
    )
    w = world(
        1,
        {"a": unsound},
        [{"testRef": "a"}],
        runner=ScriptedRunner(default="sustainedClockPct=83.22"),
    )
    w.submit(run_object(targets=["node-000"]))
    w.pass_()
    w.pass_()
    [sound] = [c for c in w.run().status.conditions if c.type == "ThresholdsSound"]
    assert (sound.status, sound.reason) == ("False", "UnsoundThresholds")
    assert w.run().status.phase is Phase.RUNNING


def test_32_pair_with_cap_below_two_is_refused_before_any_cordon() -> None:
    w = world(2, {"p": spec_of("ib-write-bw", scope="Pair")}, [{"testRef": "p"}])
    w.submit(run_object(targets=["node-000", "node-001"], maxConcurrentNodes=1))
    w.backend.advance_to(200)
    w.drive()
    status = w.run().status
    assert status.phase is Phase.ERROR and status.results[0].name == "resolve"
    assert all(not n.annotations for n in w.backend.nodes.values())


def test_33_baseline_without_gates_runs_and_envelopes_say_baseline() -> None:
    w = world(1, {"a": spec_of()}, [{"testRef": "a"}], runner=ScriptedRunner(default=OK))
    w.submit(run_object(targets=["node-000"], baseline=True))
    assert w.drive().run.status.phase is Phase.PASSED
    assert w.backend.deliveries and all(d.baseline for d in w.backend.deliveries)


def test_34_variant_cells_run_with_their_axis_env() -> None:
    entry = {
        "testRef": "g",
        "variants": [
            {"name": f"c{i}", "axes": {"precision": p}}
            for i, p in enumerate(["fp8", "bf16", "fp16", "fp32"])
        ],
    }
    w = world(1, {"g": spec_of("gemm-sweep")}, [entry], runner=ScriptedRunner(default=OK))
    w.submit(run_object(targets=["node-000"]))
    status = w.drive().run.status
    assert sorted(r.name for r in status.results) == ["g-c0", "g-c1", "g-c2", "g-c3"]
    assert {r.variant_axes["precision"] for r in status.results} == {"fp8", "bf16", "fp16", "fp32"}
    envs = {c.spec.test: c.spec.env_value("BURNIN_VARIANT_PRECISION") for c in w.runner.calls}
    assert envs["g-c0"] == "fp8"
    assert any(c.type == "PlanExpanded" for c in status.conditions)


def test_35_editing_a_test_mid_run_changes_nothing_in_flight() -> None:
    w = world(1, {"a": GATED}, [{"testRef": "a"}], runner=ScriptedRunner(default=BAD))
    w.submit(run_object(targets=["node-000"]))
    w.pass_()
    w.backend.tests["a"] = spec_of()  # gates removed after the plan was pinned
    assert w.drive().run.status.phase is Phase.FAILED


def test_36_kind_without_default_image_settles_error_naming_the_kind() -> None:
    w = world(1, {"d": spec_of("disk-io")}, [{"testRef": "d"}])
    w.submit(run_object(targets=["node-000"]))
    status = w.drive().run.status
    assert status.phase is Phase.ERROR
    assert 'no default runner image for kind "disk-io"' in (status.results[0].message or "")


def test_resume_window_for_grace_constant_is_two_minutes() -> None:
    from glimmer.plan.grace import RESOLVE_GRACE

    assert timedelta(minutes=2) == RESOLVE_GRACE
